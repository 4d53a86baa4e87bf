package sluice

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestMakeFuzzRunsEveryFuzzTarget: the Makefile's FUZZ_TARGETS (which make fuzz and make test
// run) is exactly the set of fuzz functions in the repository's test files.
func TestMakeFuzzRunsEveryFuzzTarget(t *testing.T) {
	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(\w+ \*testing\.F\)`)
	var found []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "third_party" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range fuzzFunc.FindAllStringSubmatch(string(src), -1) {
			found = append(found, "./"+filepath.Dir(path)+":"+m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^FUZZ_TARGETS := (.*)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("no FUZZ_TARGETS line in the Makefile")
	}
	listed := strings.Fields(string(m[1]))
	sort.Strings(found)
	sort.Strings(listed)
	if strings.Join(found, " ") != strings.Join(listed, " ") {
		t.Fatalf("FUZZ_TARGETS lists\n  %v\nthe test files define\n  %v", listed, found)
	}
}
