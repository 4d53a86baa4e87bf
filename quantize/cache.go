package quantize

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
// rewriting. An entry is named by the SHA-256 of the source graph, Version and the Options,
// so a changed model, rewrite or rule never meets an old entry; a sidecar records the entry's
// own SHA-256, and an entry whose bytes do not match it (a torn write, a disk fault, an edit)
// is rewritten rather than served.
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

// RemoveAbandoned removes the temporary files of writes that a killed process left (each
// the size of a graph) older than before, the time a write still under way could not predate,
// and reports how many it removed.
func (c *Cache) RemoveAbandoned(before time.Time) int {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".tmp-") || !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(before) && os.Remove(filepath.Join(c.dir, e.Name())) == nil {
			removed++
		}
	}
	return removed
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

// Int8 returns src rewritten by Int8 under the cache's Options, from the cache when a verified
// entry is there.
func (c *Cache) Int8(src []byte) (Result, error) {
	srcSum := sha256.Sum256(src)
	key := sha256.Sum256([]byte(Version + "\x00" + hex.EncodeToString(srcSum[:]) + "\x00" + strconv.Itoa(c.opts.MinColumns) + "\x00" + strconv.FormatBool(c.opts.ReduceRange)))
	path := filepath.Join(c.dir, hex.EncodeToString(key[:16])+".int8.onnx")
	meta := path + ".json"

	data, verr := c.verified(path, meta, srcSum)
	if verr == nil {
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
// reader sees the old file or the whole new one.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
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
	// Readable by other users, as files written any other way: a cache filled while an
	// image is built serves the user the server runs as.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}
