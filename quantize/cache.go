package quantize

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Outcome says where a Cache's answer came from.
type Outcome string

// The outcomes of Cache.Int8.
const (
	Rewritten Outcome = "rewritten" // no entry: rewritten now, and stored
	Cached    Outcome = "cached"    // read from a verified entry
	Rebuilt   Outcome = "rebuilt"   // an entry failed verification: rewritten now, and replaced
	Unstored  Outcome = "unstored"  // rewritten now; the entry could not be written (Result.StoreErr)
)

// Cache keeps rewritten graphs in a directory so that a restart loads them instead of
// rewriting. An entry is named by its model's slot (the model's name and the Options) and
// its key (the SHA-256 of the source graph, and Version), so a changed model, rewrite or rule
// never meets an old entry; storing one removes the others of its slot, which nothing would
// read again (the model's earlier files, an older rewrite). A sidecar records the entry's own
// SHA-256, and an entry whose bytes do not match it (a torn write, a disk fault, an edit) is
// rewritten rather than served.
type Cache struct {
	dir  string
	opts Options
}

// NewCache returns a cache in dir, creating it if needed. An empty dir is refused.
func NewCache(dir string, opts Options) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("quantize: the cache needs a directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("quantize: cache directory: %w", err)
	}
	return &Cache{dir: dir, opts: opts.withDefaults()}, nil
}

// RemoveAbandoned removes what no process will read again, each file the size of a graph:
// the temporary files of writes that a killed process left, older than before (the time a
// write still under way could not predate), and the entries of releases that named them by
// key alone. It reports how many files it removed.
func (c *Cache) RemoveAbandoned(before time.Time) int {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		switch {
		case strings.HasPrefix(name, ".tmp-"):
			if info, err := e.Info(); err != nil || !info.ModTime().Before(before) {
				continue
			}
		case !unslotted.MatchString(name):
			continue
		}
		if os.Remove(filepath.Join(c.dir, name)) == nil {
			removed++
		}
	}
	return removed
}

// unslotted is an entry's file (graph, sidecar or a caller's note) as releases before slots
// named it: 32 hex digits of key alone.
var unslotted = regexp.MustCompile(`^[0-9a-f]{32}\.int8\.onnx(\..*)?$`)

// entryPath is where model's rewrite of a source with SHA-256 srcSum lives: its slot, then
// its key.
func (c *Cache) entryPath(model string, srcSum [32]byte) string {
	return filepath.Join(c.dir, c.slot(model)+"-"+c.key(srcSum)+".int8.onnx")
}

// slot names model's entries under the cache's Options, one stored at a time.
func (c *Cache) slot(model string) string {
	sum := sha256.Sum256([]byte(model + "\x00" + strconv.Itoa(c.opts.MinColumns) + "\x00" + strconv.FormatBool(c.opts.ReduceRange)))
	return hex.EncodeToString(sum[:8])
}

func (c *Cache) key(srcSum [32]byte) string {
	sum := sha256.Sum256([]byte(Version + "\x00" + hex.EncodeToString(srcSum[:])))
	return hex.EncodeToString(sum[:16])
}

// removeSuperseded removes the files of the slot's entries other than keep's: graphs,
// sidecars and the notes callers keep beside them.
func (c *Cache) removeSuperseded(model, keep string) {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	slot, keep := c.slot(model)+"-", filepath.Base(keep)
	for _, e := range entries {
		if name := e.Name(); strings.HasPrefix(name, slot) && !strings.HasPrefix(name, keep) {
			_ = os.Remove(filepath.Join(c.dir, name)) // one left only takes room; the next load tries again
		}
	}
}

// Result is a rewritten graph and how it was had.
type Result struct {
	ONNX    []byte
	Report  Report
	Outcome Outcome
	// Path is the entry's file (empty when Unstored); a caller may keep facts about the
	// rewritten graph beside it, under Path plus a suffix of its own.
	Path string
	// Why says what failed verification (Rebuilt) or storing (Unstored).
	Why error
	// SHA256 is the rewritten graph's (hex).
	SHA256 string
}

type sidecar struct {
	Version      string `json:"version"`
	SourceSHA256 string `json:"source_sha256"`
	SHA256       string `json:"sha256"`
	Report       Report `json:"report"`
}

// Int8 returns src, the graph of the model named model, rewritten by Int8 under the cache's
// Options, from the cache when a verified entry is there. Storing a new entry removes the
// model's others: two processes that share the directory and serve two versions of one
// model (a rollout) each rewrite at every start until one version is left.
func (c *Cache) Int8(model string, src []byte) (Result, error) {
	srcSum := sha256.Sum256(src)
	path := c.entryPath(model, srcSum)
	meta := path + ".json"

	data, verr := c.verified(path, meta, srcSum)
	if verr == nil {
		c.removeSuperseded(model, path) // a process killed after storing it left the old one
		return Result{ONNX: data.onnx, Report: data.report, Outcome: Cached, Path: path, SHA256: data.sum}, nil
	}
	out, rep, err := Int8(src, c.opts)
	if err != nil {
		return Result{}, err
	}
	outSum := sha256.Sum256(out)
	res := Result{ONNX: out, Report: rep, Outcome: Rewritten, Path: path, SHA256: hex.EncodeToString(outSum[:])}
	if !errors.Is(verr, fs.ErrNotExist) {
		res.Outcome, res.Why = Rebuilt, verr
	}
	side, _ := json.Marshal(sidecar{Version: Version, SourceSHA256: hex.EncodeToString(srcSum[:]),
		SHA256: hex.EncodeToString(outSum[:]), Report: rep})
	// The graph first and its sidecar second: an entry without a sidecar is no entry.
	_ = os.Remove(meta)
	if err := writeAtomic(path, out); err != nil {
		return Result{ONNX: out, Report: rep, Outcome: Unstored, Why: err, SHA256: res.SHA256}, nil
	}
	if err := writeAtomic(meta, side); err != nil {
		return Result{ONNX: out, Report: rep, Outcome: Unstored, Why: err, SHA256: res.SHA256}, nil
	}
	c.removeSuperseded(model, path)
	return res, nil
}

type entry struct {
	onnx   []byte
	report Report
	sum    string
}

// verified reads an entry and checks it against its sidecar. fs.ErrNotExist means there is
// none; any other error is a damaged one.
func (c *Cache) verified(path, meta string, srcSum [32]byte) (entry, error) {
	side, err := os.ReadFile(meta)
	if err != nil {
		return entry{}, err
	}
	var s sidecar
	if err := json.Unmarshal(side, &s); err != nil {
		return entry{}, fmt.Errorf("quantize: cache sidecar %s does not parse: %w", filepath.Base(meta), err)
	}
	if s.Version != Version || s.SourceSHA256 != hex.EncodeToString(srcSum[:]) {
		return entry{}, fmt.Errorf("quantize: cache entry %s belongs to another source or version", filepath.Base(path))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return entry{}, fmt.Errorf("quantize: cache entry %s: %w", filepath.Base(path), err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != s.SHA256 {
		return entry{}, fmt.Errorf("quantize: cache entry %s does not match its recorded SHA-256", filepath.Base(path))
	}
	return entry{onnx: data, report: s.Report, sum: s.SHA256}, nil
}

// writeAtomic writes data to path through a temporary file in the same directory, so a
// reader sees the old file or the whole new one. The file's mode is 0644 less the umask:
// readable by others, as a cache filled while an image is built must be for the user the
// server runs as, writable by none but its owner whatever the umask (a graph whose bytes
// match its sidecar is served), and private under an operator's umask of 077.
func writeAtomic(path string, data []byte) error {
	tmp, err := createTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}

// createTemp is os.CreateTemp with 0644 less the umask rather than 0600.
func createTemp(dir, prefix string) (*os.File, error) {
	for range 100 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		f, err := os.OpenFile(filepath.Join(dir, prefix+hex.EncodeToString(b[:])), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("quantize: no free temporary name in %s", dir)
}
