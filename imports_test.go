package sluice

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/sluice-serving/sluice"

// TestImportsFollowTheArchitecture compares the packages' real imports of each other (go list)
// with the table under "## Import graph" in docs/ARCHITECTURE.md, both ways: an import the
// table does not allow fails, and so does a listed import that no longer exists, so that the
// document stays the real graph.
func TestImportsFollowTheArchitecture(t *testing.T) {
	want := readImportTable(t, "docs/ARCHITECTURE.md")
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		if pkg == "" {
			continue // this package
		}
		var ours []string
		for _, imp := range fields[1:] {
			if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
				ours = append(ours, rest)
			}
		}
		sort.Strings(ours)
		got[pkg] = ours
	}
	for pkg, imports := range got {
		allowed, listed := want[pkg]
		if !listed {
			t.Errorf("package %s is not in the import table of docs/ARCHITECTURE.md: add it, with what it may import", pkg)
			continue
		}
		for _, imp := range imports {
			if !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s, which docs/ARCHITECTURE.md does not allow", pkg, imp)
			}
		}
		for _, imp := range allowed {
			if !slices.Contains(imports, imp) {
				t.Errorf("docs/ARCHITECTURE.md says %s imports %s, but it does not: update the table", pkg, imp)
			}
		}
	}
	for pkg := range want {
		if _, ok := got[pkg]; !ok {
			t.Errorf("docs/ARCHITECTURE.md lists package %s, which does not exist", pkg)
		}
	}
}

// readImportTable reads the rows "| `pkg` | `a`, `b` |" of the table after "## Import graph".
func readImportTable(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Import graph"
		case in && strings.HasPrefix(line, "| `"):
			cells := strings.Split(line, "|")
			if len(cells) < 3 {
				t.Fatalf("%s: malformed row %q", path, line)
			}
			pkg := strings.Trim(strings.TrimSpace(cells[1]), "`")
			var imports []string
			for _, imp := range strings.Split(cells[2], ",") {
				if imp = strings.Trim(strings.TrimSpace(imp), "`"); imp != "" {
					imports = append(imports, imp)
				}
			}
			table[pkg] = imports
		}
	}
	if len(table) == 0 {
		t.Fatalf("%s has no import table under \"## Import graph\"", path)
	}
	return table
}

// TestWhereToChangeWhatNamesRealFiles: every file the "## Where to change what" table of
// docs/ARCHITECTURE.md names exists, and no row names more than two, so that the table says
// where each concept lives today (a row with a pattern such as handlers/<dialect>.go names
// the place a new file goes).
func TestWhereToChangeWhatNamesRealFiles(t *testing.T) {
	data, err := os.ReadFile("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, found := strings.Cut(string(data), "\n## Where to change what\n")
	if !found {
		t.Fatal("docs/ARCHITECTURE.md has no \"## Where to change what\" section")
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.Contains(cells[2], "`") {
			continue
		}
		rows++
		files := strings.Split(cells[2], ",")
		if len(files) > 2 {
			t.Errorf("%q: %d files; a concept with one home takes one or two", strings.TrimSpace(cells[1]), len(files))
		}
		for _, f := range files {
			_, name, _ := strings.Cut(f, "`")
			name, _, _ = strings.Cut(name, "`")
			if strings.Contains(name, "<") || !strings.Contains(name, "/") {
				continue
			}
			if _, err := os.Stat(name); err != nil {
				t.Errorf("%q names %s, which does not exist", strings.TrimSpace(cells[1]), name)
			}
		}
	}
	if rows < 4 {
		t.Fatalf("the table has %d rows", rows)
	}
}
