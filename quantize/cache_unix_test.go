//go:build unix

package quantize

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"google.golang.org/protobuf/proto"
)

// TestCacheFilesTakeTheUmask: an entry's files are 0644 less the umask: readable by others
// under the usual 022, private under 077, and writable by no one but their owner under 000.
func TestCacheFilesTakeTheUmask(t *testing.T) {
	m, _ := testGraph(t, rand.New(rand.NewPCG(11, 12)))
	src, _ := proto.Marshal(m)
	for _, umask := range []int{0o022, 0o077, 0} {
		res := func() Result {
			defer syscall.Umask(syscall.Umask(umask))
			c, err := NewCache(t.TempDir(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.Int8("m", src)
			if err != nil || res.Outcome != Rewritten {
				t.Fatalf("%v %v", res.Outcome, err)
			}
			return res
		}()
		for _, f := range []string{res.Path, res.Path + ".json"} {
			info, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if want := fs.FileMode(0o644 &^ umask); info.Mode().Perm() != want {
				t.Errorf("umask %03o: %s is %v, want %v", umask, filepath.Base(f), info.Mode().Perm(), want)
			}
		}
	}
}
