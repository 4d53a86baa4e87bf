package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/sluice-serving/sluice/identity"
)

// These tests keep README.md and docs/ true of the code: the README's examples are what the
// server answers, docs/CONFIGURATION.md's table is the Config struct, and every relative link
// leads somewhere. (docs/METRICS.md and the OpenMed table have their own tests:
// TestMetricsAreTheDocsTable, TestDocsListOpenMedSettings.)

const repoRoot = "../.."

// ---- the configuration table ----------------------------------------------------------------

// computedDefaults are the SLUICE_ variables whose default docs/CONFIGURATION.md states in words,
// because the code computes it (its envDefault tag is absent or a placeholder such as 0), with
// the reason. Every other row's default must be a code value equal to the field's envDefault.
var computedDefaults = map[string]string{
	"SLUICE_ORT_LIB":                 "engine.LibraryPath looks for the fetched library above the working directory, else leaves the soname to the loader",
	"SLUICE_KEEP_ALIVE":              "empty means models loaded on demand stay for ever",
	"SLUICE_MODEL_LOAD_WAIT_MS":      "unset (a nil pointer) means SLUICE_BATCH_MAX_QUEUE_WAIT_MS",
	"SLUICE_QUANTIZE":                "empty means each model's config.json decides",
	"SLUICE_QUANTIZE_CACHE_DIR":      "empty means under os.UserCacheDir",
	"SLUICE_AUTH_ROUTE_SCOPES":       "empty means identity's default scope of every route",
	"SLUICE_MODEL_ALIASES":           "the envDefault is a list of OpenMed model names, summarised in words",
	"SLUICE_BATCH_HIGH_WATERMARK":    "0 means the queue size",
	"SLUICE_BATCH_LOW_WATERMARK":     "unset (a nil pointer) means high / 2; an explicit 0 is a value of its own",
	"SLUICE_KV_LOW_WATERMARK":        "0 means the high watermark - 0.1",
	"SLUICE_GENERATE_MAX_MODEL_LEN":  "0 means the model's context, lowered to what the KV pool holds",
	"SLUICE_GENERATE_HIGH_WATERMARK": "0 means max running + queue size",
	"SLUICE_GENERATE_LOW_WATERMARK":  "0 means high / 2",
	"SLUICE_REPLICA_ID":              "empty means the host name, made a valid subject token",
	"SLUICE_JOBS_MAX_STORE_BYTES":    "unset (a nil pointer) means what the nonces and the audit's bound leave of a bounded embedded file store holding jobs with a key (half beside an unbounded audit), else no bound; an explicit 0 is no bound",
}

// configVariables are the SLUICE_ variables of Config, read from the env tags of its sections
// (Own and each package's Config: LoadConfig parses them with the prefix SLUICE_, see
// envvars.go), with each one's envDefault tag (nil when it has none). A variable two sections
// declare (the class weights) is listed once; variables() refuses two different defaults.
func configVariables(t *testing.T) map[string]*string {
	t.Helper()
	vars := map[string]*string{}
	for _, v := range variables() {
		if v.name == "SLUICE_" {
			t.Fatalf("Config.%s: empty env tag", v.field)
		}
		var def *string
		if v.hasDef {
			def = &v.def
		}
		vars[v.name] = def
	}
	if len(vars) == 0 {
		t.Fatal("Config has no env tags")
	}
	return vars
}

// configRow is one variable's row of the table: its default cell.
type configRow struct {
	def  string // the cell as written, the variable's share of it when a row names several
	line int
}

var backticked = regexp.MustCompile("`([^`]*)`")

// readConfigTable reads the SLUICE_ rows of docs/CONFIGURATION.md's first table. A row may name
// several variables in its first cell; its default cell then gives one default for each,
// separated by ", ", or one for all.
func readConfigTable(t *testing.T) map[string]configRow {
	t.Helper()
	const path = "docs/CONFIGURATION.md"
	data, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]configRow{}
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "## ") {
			break // OpenMed's table and anything after it
		}
		cells := splitRow(line)
		if len(cells) < 3 || !strings.Contains(cells[0], "`SLUICE_") {
			continue
		}
		var names []string
		for _, m := range backticked.FindAllStringSubmatch(cells[0], -1) {
			names = append(names, m[1])
		}
		defs := []string{cells[1]}
		if len(names) > 1 {
			if parts := strings.Split(cells[1], ", "); len(parts) == len(names) {
				defs = parts
			} else if len(parts) != 1 {
				t.Errorf("%s:%d: %d variables and %d defaults: %q", path, i+1, len(names), len(parts), cells[1])
				continue
			}
		}
		for k, name := range names {
			if _, dup := rows[name]; dup {
				t.Errorf("%s:%d: %s has a second row", path, i+1, name)
			}
			rows[name] = configRow{def: strings.TrimSpace(defs[min(k, len(defs)-1)]), line: i + 1}
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no SLUICE_ rows before the first \"## \" heading", path)
	}
	return rows
}

// splitRow splits a Markdown table row into its trimmed cells ("\|" is a pipe inside a cell).
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") {
		return nil
	}
	cells := strings.Split(strings.ReplaceAll(line[1:len(line)-1], `\|`, "\x00"), "|")
	for i, c := range cells {
		cells[i] = strings.ReplaceAll(strings.TrimSpace(c), "\x00", "|")
	}
	return cells
}

// documentedDefault reads a default cell: a code value first ("`0` (no cap)" is 0), or no
// value ("", "none", "(none)", "none: ..."), or words.
func documentedDefault(cell string) (value string, kind string) {
	switch {
	case strings.HasPrefix(cell, "`"):
		end := strings.Index(cell[1:], "`")
		if end < 0 {
			return cell, "words"
		}
		return cell[1 : 1+end], "value"
	case cell == "", cell == "none", cell == "(none)", strings.HasPrefix(cell, "none:"):
		return "", "none"
	}
	return cell, "words"
}

// sameDefault says whether a documented value is the tag's: equal as text, or as numbers.
func sameDefault(doc, tag string) bool {
	if doc == tag {
		return true
	}
	a, errA := strconv.ParseFloat(doc, 64)
	b, errB := strconv.ParseFloat(tag, 64)
	return errA == nil && errB == nil && a == b
}

// TestDocsConfigurationTableIsTheConfig: docs/CONFIGURATION.md's table lists exactly the SLUICE_
// variables of Config, each once, and each default is the field's envDefault, except the
// defaults the code computes (computedDefaults), which the table states in words.
func TestDocsConfigurationTableIsTheConfig(t *testing.T) {
	t.Parallel()
	vars := configVariables(t)
	rows := readConfigTable(t)
	for name := range vars {
		if _, ok := rows[name]; !ok {
			t.Errorf("%s is a setting (Config) but has no row in docs/CONFIGURATION.md", name)
		}
	}
	for name, row := range rows {
		tag, ok := vars[name]
		if !ok {
			t.Errorf("docs/CONFIGURATION.md:%d: %s is not a setting (no env tag in Config)", row.line, name)
			continue
		}
		value, kind := documentedDefault(row.def)
		if reason, computed := computedDefaults[name]; computed {
			if kind != "words" {
				t.Errorf("docs/CONFIGURATION.md:%d: %s's default is computed (%s); say so in words, not %q", row.line, name, reason, row.def)
			}
			continue
		}
		switch kind {
		case "words":
			t.Errorf("docs/CONFIGURATION.md:%d: %s's default %q is not a value: write its envDefault in backticks, or add it to computedDefaults with the reason", row.line, name, row.def)
		case "none":
			if tag != nil && *tag != "" {
				t.Errorf("docs/CONFIGURATION.md:%d: %s's default is %q, the table says none", row.line, name, *tag)
			}
		case "value":
			if tag == nil {
				t.Errorf("docs/CONFIGURATION.md:%d: %s has no envDefault, the table says %q", row.line, name, value)
			} else if !sameDefault(value, *tag) {
				t.Errorf("docs/CONFIGURATION.md:%d: %s's default is %q, the table says %q", row.line, name, *tag, value)
			}
		}
	}
	for name := range computedDefaults {
		if _, ok := vars[name]; !ok {
			t.Errorf("computedDefaults names %s, which is not a setting", name)
		}
	}
}

// ---- links ------------------------------------------------------------------------------------

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinksResolve: every relative link in README.md and docs/*.md names a file or folder
// that exists, and a link to a heading of a Markdown file names one it has.
func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(repoRoot, "README.md")}, files...)
	links := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, file)
		for n, line := range proseLines(string(data)) {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %s: %v", rel, n+1, target, err)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(dest, ".md") {
					headings, err := os.ReadFile(dest)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Contains(headingAnchors(string(headings)), anchor) {
						t.Errorf("%s:%d: link %s: no heading with that anchor", rel, n+1, target)
					}
				}
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative links found in README.md and docs/")
	}
}

// proseLines are a Markdown file's lines with those inside fenced code blocks blanked, so that
// line numbers stay the file's.
func proseLines(doc string) []string {
	lines := strings.Split(doc, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			lines[i] = ""
		} else if in {
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors are the anchors GitHub gives a Markdown file's headings: lower case, spaces
// to hyphens, punctuation other than hyphens and underscores dropped.
func headingAnchors(doc string) []string {
	var out []string
	for _, l := range proseLines(doc) {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// ---- the README's examples ----------------------------------------------------------------

// The README's examples are pairs of fenced blocks under "## Examples": a ```sh block holding one
// curl command, then a ```json block (the answer) or a ```text block (a server-sent event
// stream, one `data:` line per event). In the shown JSON:
//
//   - a top-level field that differs between two identical requests (variesPerRequest) is
//     shown as "..." and only its presence is checked;
//   - a member "...": "..." means the answer has fields the example leaves out; without it the
//     answer's fields are exactly those shown;
//   - a last array element "..." means the answer's array goes on;
//   - a number with d decimals matches the served one within 10^-d (so 0.99999 stands for
//     0.9999983); a number without decimals must be equal;
//   - everything else must be equal.
const elided = "..."

// variesPerRequest are the top-level answer fields whose values change with every request.
var variesPerRequest = map[string]string{
	"timestamp":          "when the entity routes answered",
	"processing_time":    "how long the entity routes took",
	"id":                 "OpenAI's completion id, new for each request",
	"created":            "OpenAI's creation time",
	"system_fingerprint": "the build's version",
}

type example struct {
	line              int
	command           string
	outputKind, shown string
}

// readmeExamples reads the example pairs of README.md's "## Examples" section.
func readmeExamples(t *testing.T) []example {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	type block struct {
		line       int
		info, body string
	}
	var blocks []block
	lines := strings.Split(string(data), "\n")
	in, inBlock := false, false
	var cur block
	for i, l := range lines {
		switch {
		case !inBlock && strings.HasPrefix(l, "## "):
			in = l == "## Examples"
		case !in:
		case !inBlock && strings.HasPrefix(l, "```"):
			inBlock, cur = true, block{line: i + 1, info: strings.TrimPrefix(l, "```")}
		case inBlock && l == "```":
			inBlock = false
			blocks = append(blocks, cur)
		case inBlock:
			cur.body += l + "\n"
		}
	}
	var out []example
	for i := 0; i < len(blocks); i++ {
		b := blocks[i]
		if b.info != "sh" || !strings.HasPrefix(b.body, "curl ") {
			t.Fatalf("README.md:%d: a ```%s block where an example's ```sh curl command belongs", b.line, b.info)
		}
		if i+1 == len(blocks) || (blocks[i+1].info != "json" && blocks[i+1].info != "text") {
			t.Fatalf("README.md:%d: the example has no ```json or ```text block with its answer after it", b.line)
		}
		out = append(out, example{line: b.line, command: b.body, outputKind: blocks[i+1].info, shown: blocks[i+1].body})
		i++
	}
	if len(out) < 4 {
		t.Fatalf("README.md: %d examples under \"## Examples\"; a newcomer should see at least 4", len(out))
	}
	return out
}

// shellWords splits a command as sh would for the quoting the examples use: single and double
// quotes, and backslash-newline continuations. A pipe or a redirection is refused, since the
// test would not run it.
func shellWords(cmd string) ([]string, error) {
	cmd = strings.ReplaceAll(cmd, "\\\n", " ")
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(cmd[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unclosed %c", c)
			}
			cur.WriteString(cmd[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.IndexByte("|;&<>$`\\", c) >= 0:
			return nil, fmt.Errorf("%q is shell the test does not run", c)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// curlRequest makes the request an example's curl command sends, to base instead of
// localhost:8080.
func curlRequest(command, base string) (*http.Request, error) {
	words, err := shellWords(command)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 || words[0] != "curl" {
		return nil, fmt.Errorf("not a curl command")
	}
	var url, body string
	var hasBody bool
	headers := http.Header{}
	for i := 1; i < len(words); i++ {
		switch w := words[i]; w {
		case "-s", "-N", "-sN":
		case "-H", "-d":
			if i+1 == len(words) {
				return nil, fmt.Errorf("%s without a value", w)
			}
			i++
			if w == "-d" {
				body, hasBody = words[i], true
				continue
			}
			k, v, ok := strings.Cut(words[i], ":")
			if !ok {
				return nil, fmt.Errorf("header %q", words[i])
			}
			headers.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		default:
			if strings.HasPrefix(w, "-") {
				return nil, fmt.Errorf("curl option %s: the test knows -s, -N, -H and -d", w)
			}
			path, ok := strings.CutPrefix(strings.TrimPrefix(w, "http://"), "localhost:8080")
			if !ok || url != "" {
				return nil, fmt.Errorf("URL %q: one, on localhost:8080, as make serve listens", w)
			}
			url = base + path
		}
	}
	if url == "" {
		return nil, fmt.Errorf("no URL")
	}
	method := http.MethodGet
	if hasBody {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = headers
	return req, nil
}

func decodeJSON(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// matchShown compares a shown value with the served one under the rules above readmeExamples,
// and returns what differs, each at its JSON path.
func matchShown(shown, served any, path string) []string {
	at := path
	if at == "" {
		at = "the answer"
	}
	switch s := shown.(type) {
	case map[string]any:
		m, ok := served.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: shown an object, served %v", at, served)}
		}
		var diffs []string
		open := false
		if v, ok := s[elided]; ok {
			if v != elided {
				diffs = append(diffs, fmt.Sprintf(`%s: the member "...": must be "..."`, at))
			}
			open = true
		}
		for k, v := range s {
			if k == elided {
				continue
			}
			sv, ok := m[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: shown but not served", path, k))
				continue
			}
			if _, varies := variesPerRequest[k]; varies && path == "" {
				if v != elided {
					diffs = append(diffs, fmt.Sprintf(`.%s changes with every request: show it as "..."`, k))
				}
				continue
			}
			diffs = append(diffs, matchShown(v, sv, path+"."+k)...)
		}
		if !open {
			for k := range m {
				if _, ok := s[k]; !ok {
					diffs = append(diffs, fmt.Sprintf(`%s.%s: served but not shown (show it, or add "...": "...")`, path, k))
				}
			}
		}
		return diffs
	case []any:
		a, ok := served.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: shown an array, served %v", at, served)}
		}
		prefix := len(s) > 0 && s[len(s)-1] == elided
		if prefix {
			s = s[:len(s)-1]
		}
		if len(a) < len(s) || !prefix && len(a) != len(s) {
			return []string{fmt.Sprintf("%s: shown %d elements, served %d", at, len(s), len(a))}
		}
		var diffs []string
		for i := range s {
			diffs = append(diffs, matchShown(s[i], a[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return diffs
	case json.Number:
		n, ok := served.(json.Number)
		if !ok {
			return []string{fmt.Sprintf("%s: shown %s, served %v", at, s, served)}
		}
		want, err1 := s.Float64()
		got, err2 := n.Float64()
		if err1 != nil || err2 != nil {
			return []string{fmt.Sprintf("%s: shown %s, served %s", at, s, n)}
		}
		tolerance := 0.0
		if _, decimals, ok := strings.Cut(string(s), "."); ok && !strings.ContainsAny(decimals, "eE") {
			tolerance = math.Pow10(-len(decimals)) * (1 + 1e-9)
		}
		if math.Abs(want-got) > tolerance {
			return []string{fmt.Sprintf("%s: shown %s, served %s", at, s, n)}
		}
		return nil
	case string:
		if s == elided {
			return []string{fmt.Sprintf(`%s: "..." stands only for a field that changes with every request (%v)`, at, slices.Sorted(maps.Keys(variesPerRequest)))}
		}
	}
	if !reflect.DeepEqual(shown, served) {
		return []string{fmt.Sprintf("%s: shown %v, served %v", at, shown, served)}
	}
	return nil
}

// sseData is the data of each event in a server-sent event stream, in order.
func sseData(stream string) []string {
	var out []string
	for _, l := range strings.Split(stream, "\n") {
		if d, ok := strings.CutPrefix(l, "data:"); ok {
			out = append(out, strings.TrimPrefix(d, " "))
		}
	}
	return out
}

// matchExample compares an example's shown answer with what the server sent.
func matchExample(kind, shown string, served []byte) []string {
	if kind == "json" {
		want, err := decodeJSON(shown)
		if err != nil {
			return []string{fmt.Sprintf("the shown answer is not JSON: %v", err)}
		}
		got, err := decodeJSON(string(served))
		if err != nil {
			return []string{fmt.Sprintf("the served answer is not JSON: %v: %s", err, served)}
		}
		return matchShown(want, got, "")
	}
	var wantEvents []string
	for _, l := range strings.Split(strings.TrimSpace(shown), "\n") {
		d, ok := strings.CutPrefix(l, "data: ")
		if !ok {
			return []string{fmt.Sprintf("shown stream line %q is not an event's data: line", l)}
		}
		wantEvents = append(wantEvents, d)
	}
	gotEvents := sseData(string(served))
	if len(gotEvents) != len(wantEvents) {
		return []string{fmt.Sprintf("shown %d events, served %d:\n%s", len(wantEvents), len(gotEvents), served)}
	}
	var diffs []string
	for i := range wantEvents {
		if wantEvents[i] == "[DONE]" || gotEvents[i] == "[DONE]" {
			if wantEvents[i] != gotEvents[i] {
				diffs = append(diffs, fmt.Sprintf("event %d: shown %s, served %s", i+1, wantEvents[i], gotEvents[i]))
			}
			continue
		}
		for _, d := range matchExample("json", wantEvents[i], []byte(gotEvents[i])) {
			diffs = append(diffs, fmt.Sprintf("event %d: %s", i+1, d))
		}
	}
	return diffs
}

// TestREADMEExamplesAreWhatTheServerAnswers sends each example of README.md to a server started
// with make serve's settings (the shipped models, the entity ones in int8 as their config.json
// asks) and compares each answer with the one shown.
func TestREADMEExamplesAreWhatTheServerAnswers(t *testing.T) {
	t.Parallel()
	examples := readmeExamples(t)
	srv := startServer(t, "SLUICE_QUANTIZE=", "SLUICE_QUANTIZE_CACHE_DIR="+t.TempDir())
	for _, ex := range examples {
		req, err := curlRequest(ex.command, srv.url)
		if err != nil {
			t.Errorf("README.md:%d: %v", ex.line, err)
			continue
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("README.md:%d: %v", ex.line, err)
		}
		served, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("README.md:%d: %v", ex.line, err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Errorf("README.md:%d: status %d: %s", ex.line, resp.StatusCode, served)
			continue
		}
		diffs := matchExample(ex.outputKind, ex.shown, served)
		slices.Sort(diffs)
		for _, d := range diffs {
			t.Errorf("README.md:%d %s %s: %s", ex.line, req.Method, req.URL.Path, d)
		}
	}
}

// TestExampleMatchingCatchesMistakes: the comparison behind the README's examples refuses what
// it should, so that a passing run means the examples are true.
func TestExampleMatchingCatchesMistakes(t *testing.T) {
	t.Parallel()
	served := []byte(`{"id":"x1","text":"a","n":0.9999983,"k":8,"list":[1,2],"inner":{"id":3}}`)
	for _, c := range []struct {
		shown string
		ok    bool
	}{
		{`{"id":"...","text":"a","n":0.99999,"k":8,"list":[1,2],"inner":{"id":3}}`, true},
		{`{"id":"...","text":"a","...":"..."}`, true},
		{`{"id":"...","list":[1,"..."],"...":"..."}`, true},
		{`{"id":"...","text":"a","n":0.99999,"k":8,"list":[1,2]}`, false},                        // a field left out
		{`{"id":"x1","text":"a","...":"..."}`, false},                                            // a varying field shown
		{`{"id":"...","text":"b","...":"..."}`, false},                                           // a different value
		{`{"id":"...","n":0.9999,"k":8.0,"...":"..."}`, true},                                    // shortened numbers
		{`{"id":"...","n":0.99990,"...":"..."}`, false},                                          // a number too far off
		{`{"id":"...","k":9,"...":"..."}`, false},                                                // an integer off by one
		{`{"id":"...","inner":{"id":"..."},"...":"..."}`, false},                                 // "..." only at the top
		{`{"id":"...","list":[1],"...":"..."}`, false},                                           // an element left out
		{`{"id":"...","text":"...","...":"..."}`, false},                                         // "..." for a fixed field
		{`{"id":"...","text":"a","n":0.99999,"k":8,"list":[1,2],"inner":{"id":3},"x":1}`, false}, // a field not served
	} {
		if diffs := matchExample("json", c.shown, served); (len(diffs) == 0) != c.ok {
			t.Errorf("%s: %v (want ok=%v)", c.shown, diffs, c.ok)
		}
	}
	stream := []byte("data: {\"index\":1}\n\n: keep-alive\n\ndata: [DONE]\n\n")
	if diffs := matchExample("text", "data: {\"index\":1}\ndata: [DONE]\n", stream); len(diffs) != 0 {
		t.Errorf("stream: %v", diffs)
	}
	if diffs := matchExample("text", "data: {\"index\":1}\n", stream); len(diffs) == 0 {
		t.Error("a stream with an event left out matched")
	}
	for _, cmd := range []string{"curl -s localhost:8080/x | jq .", "curl -X PUT localhost:8080/x", "curl -s example.org/x"} {
		if _, err := curlRequest(cmd, "http://127.0.0.1:1"); err == nil {
			t.Errorf("%q was taken", cmd)
		}
	}
	req, err := curlRequest("curl -s localhost:8080/generate -H 'Content-Type: application/json' -d '{\n  \"a\": 1\n}'\n", "http://127.0.0.1:1")
	if err != nil || req.Method != http.MethodPost || req.URL.Path != "/generate" || req.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%v %v", req, err)
	}
	if b, _ := io.ReadAll(req.Body); !bytes.Equal(b, []byte("{\n  \"a\": 1\n}")) {
		t.Errorf("body %q", b)
	}
}

// TestDocsScopeTableIsTheScopes: API.md's table of route scopes names every route the server
// asks a scope of, with that scope, and no other route.
func TestDocsScopeTableIsTheScopes(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs/API.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "| route | scope |\n|---|---|\n")
	if !ok {
		t.Fatal("docs/API.md has no table of route scopes")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	documented := map[string]string{}
	for _, line := range strings.Split(table, "\n") {
		cells := splitRow(line)
		if len(cells) < 2 {
			continue
		}
		routeGroups, scopeGroups := strings.Split(cells[0], ";"), strings.Split(cells[1], ";")
		for g, routes := range routeGroups {
			scope := backticked.FindStringSubmatch(scopeGroups[min(g, len(scopeGroups)-1)])
			if scope == nil {
				t.Fatalf("row %q names no scope", line)
			}
			for _, m := range backticked.FindAllStringSubmatch(routes, -1) {
				documented[m[1]] = scope[1]
			}
		}
	}
	want := map[string]string{identity.GatewayFaceRoute: "pii:write"}
	for route, scopes := range identity.DefaultRouteScopes {
		want[route] = strings.Join(scopes, " ")
	}
	for route, scope := range want {
		if documented[route] != scope {
			t.Errorf("%s: the table says %q, the server asks %q", route, documented[route], scope)
		}
	}
	for route := range documented {
		if _, ok := want[route]; !ok {
			t.Errorf("%s: in the table, not among the server's routes", route)
		}
	}
}
