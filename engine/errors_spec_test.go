package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// These tests keep spec/ in step with the code: the result-code table of
// spec/errors.md against weir.Errors (engine.Errors), and the fixed texts and the plan-hash
// example of spec/states.md against the functions that produce them.

const (
	specErrorsDoc = "../spec/errors.md"
	specStatesDoc = "../spec/states.md"
)

var specErrorTableHeader = []string{"Code", "Go sentinel", "Meaning", "Typical cause", "Retry?"}

// specErrorRow is one row of the result-code table.
type specErrorRow struct {
	line     int
	code     string
	sentinel string
}

// specReadErrorTable returns the rows of the one table in doc whose header is
// specErrorTableHeader.
func specReadErrorTable(doc string) ([]specErrorRow, error) {
	lines := strings.Split(doc, "\n")
	start := -1
	for i, l := range lines {
		if slices.Equal(specTableCells(l), specErrorTableHeader) {
			if start >= 0 {
				return nil, fmt.Errorf("lines %d and %d: two result-code tables", start+1, i+1)
			}
			start = i
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("no table with header %q", specErrorTableHeader)
	}
	if start+1 >= len(lines) || !regexp.MustCompile(`^\|(\s*:?-+:?\s*\|)+\s*$`).MatchString(lines[start+1]) {
		return nil, fmt.Errorf("line %d: the header is not followed by a separator row", start+2)
	}
	var rows []specErrorRow
	for i := start + 2; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
		cells := specTableCells(lines[i])
		if len(cells) != len(specErrorTableHeader) {
			return nil, fmt.Errorf("line %d: %d cells, want %d", i+1, len(cells), len(specErrorTableHeader))
		}
		for j, c := range cells {
			if c == "" {
				return nil, fmt.Errorf("line %d: column %q is empty", i+1, specErrorTableHeader[j])
			}
		}
		rows = append(rows, specErrorRow{line: i + 1, code: strings.Trim(cells[0], "`"), sentinel: strings.Trim(cells[1], "`")})
	}
	return rows, nil
}

// specTableCells splits a markdown table line into trimmed cells; nil for a line
// that is not a table row.
func specTableCells(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || len(line) < 2 {
		return nil
	}
	line = strings.ReplaceAll(line[1:len(line)-1], `\|`, "\x00")
	cells := strings.Split(line, "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(strings.ReplaceAll(c, "\x00", "|"))
	}
	return cells
}

// specDeclared is what the package's source declares: sentinel names with their
// codes (vars initialised with &Error{...}), and the ReasonText constants.
type specDeclared struct {
	sentinels map[string]string // name -> code
	reasons   map[string]string // name -> text
}

// specReadDeclared parses the package's non-test source files.
func specReadDeclared(dir string) (specDeclared, error) {
	d := specDeclared{sentinels: map[string]string{}, reasons: map[string]string{}}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return d, err
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return d, err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || (gd.Tok != token.VAR && gd.Tok != token.CONST) {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if gd.Tok == token.CONST && strings.HasPrefix(id.Name, "ReasonText") {
						if s, ok := specStringLit(vs.Values[i]); ok {
							d.reasons[id.Name] = s
						}
					}
					if gd.Tok == token.VAR {
						if code, ok := specErrorLitCode(vs.Values[i]); ok {
							d.sentinels[id.Name] = code
						}
					}
				}
			}
		}
	}
	return d, nil
}

// specErrorLitCode returns the code of an &Error{"CODE", ...} expression.
func specErrorLitCode(e ast.Expr) (string, bool) {
	u, ok := e.(*ast.UnaryExpr)
	if !ok || u.Op != token.AND {
		return "", false
	}
	cl, ok := u.X.(*ast.CompositeLit)
	if !ok {
		return "", false
	}
	if id, ok := cl.Type.(*ast.Ident); !ok || id.Name != "Error" || len(cl.Elts) == 0 {
		return "", false
	}
	first := cl.Elts[0]
	if _, ok := first.(*ast.KeyValueExpr); ok {
		first = nil
		for _, el := range cl.Elts {
			if kv := el.(*ast.KeyValueExpr); kv.Key.(*ast.Ident).Name == "Code" {
				first = kv.Value
			}
		}
		if first == nil {
			return "", false
		}
	}
	return specStringLit(first)
}

func specStringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(bl.Value)
	return s, err == nil
}

var specCodePattern = regexp.MustCompile(`^[A-Z]+$`)

// specCheckErrorTable lists every way rows, the declared sentinels and errs (the
// Errors list) disagree; none means they match.
func specCheckErrorTable(rows []specErrorRow, sentinels map[string]string, errs []*weir.Error) []string {
	var problems []string
	codes := map[string]string{} // code -> sentinel name
	for name, code := range sentinels {
		if other, dup := codes[code]; dup {
			problems = append(problems, fmt.Sprintf("%s and %s share the code %s", min(name, other), max(name, other), code))
		}
		codes[code] = name
	}
	listed := map[string]bool{}
	for i, e := range errs {
		if listed[e.Code] {
			problems = append(problems, fmt.Sprintf("Errors[%d]: code %s is listed twice", i, e.Code))
		}
		listed[e.Code] = true
		if !specCodePattern.MatchString(e.Code) {
			problems = append(problems, fmt.Sprintf("Errors[%d]: code %q is not upper-case letters only", i, e.Code))
		}
		if _, ok := codes[e.Code]; !ok {
			problems = append(problems, fmt.Sprintf("Errors[%d]: code %s has no declared sentinel", i, e.Code))
		}
	}
	var unlisted []string
	for name, code := range sentinels {
		if !listed[code] {
			unlisted = append(unlisted, name)
		}
	}
	slices.Sort(unlisted)
	for _, name := range unlisted {
		problems = append(problems, fmt.Sprintf("%s (%s) is declared but missing from Errors", name, sentinels[name]))
	}
	for i := 0; i < max(len(rows), len(errs)); i++ {
		switch {
		case i >= len(errs):
			problems = append(problems, fmt.Sprintf("line %d: row %s/%s has no entry in Errors", rows[i].line, rows[i].code, rows[i].sentinel))
		case i >= len(rows):
			problems = append(problems, fmt.Sprintf("Errors[%d] (%s) has no row in the table", i, errs[i].Code))
		default:
			r, e := rows[i], errs[i]
			if r.code != e.Code {
				problems = append(problems, fmt.Sprintf("line %d: code %s, but Errors[%d] is %s", r.line, r.code, i, e.Code))
			}
			if code, ok := sentinels[r.sentinel]; !ok {
				problems = append(problems, fmt.Sprintf("line %d: %s is not a declared sentinel", r.line, r.sentinel))
			} else if code != e.Code {
				problems = append(problems, fmt.Sprintf("line %d: %s has code %s, but Errors[%d] is %s", r.line, r.sentinel, code, i, e.Code))
			}
		}
	}
	return problems
}

func specRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSpecErrorTableListsEngineErrorsInOrder(t *testing.T) {
	rows, err := specReadErrorTable(specRead(t, specErrorsDoc))
	if err != nil {
		t.Fatalf("%s: %v", specErrorsDoc, err)
	}
	// The sentinels are declared, with their codes, in package weir (the
	// module's root); engine names the same values.
	d, err := specReadDeclared("..")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.sentinels) == 0 {
		t.Fatal("found no sentinel declarations in package weir's source")
	}
	for _, p := range specCheckErrorTable(rows, d.sentinels, weir.Errors) {
		t.Errorf("%s: %s", specErrorsDoc, p)
	}
}

func TestSpecErrorTableCheckCatchesDrift(t *testing.T) {
	sentinels := map[string]string{"ErrA": "AAA", "ErrB": "BBB"}
	a, b := &weir.Error{Code: "AAA"}, &weir.Error{Code: "BBB"}
	rows := []specErrorRow{{1, "AAA", "ErrA"}, {2, "BBB", "ErrB"}}
	if p := specCheckErrorTable(rows, sentinels, []*weir.Error{a, b}); len(p) != 0 {
		t.Fatalf("a matching table reported %q", p)
	}
	cases := []struct {
		name      string
		rows      []specErrorRow
		sentinels map[string]string
		errs      []*weir.Error
	}{
		{"sentinel in Errors without a row", rows[:1], sentinels, []*weir.Error{a, b}},
		{"row without a sentinel", append(slices.Clone(rows), specErrorRow{3, "CCC", "ErrC"}), sentinels, []*weir.Error{a, b}},
		{"rows out of order", []specErrorRow{rows[1], rows[0]}, sentinels, []*weir.Error{a, b}},
		{"row names the wrong sentinel", []specErrorRow{{1, "AAA", "ErrB"}, rows[1]}, sentinels, []*weir.Error{a, b}},
		{"sentinel declared but not in Errors", rows[:1], sentinels, []*weir.Error{a}},
		{"two sentinels share a code", rows, map[string]string{"ErrA": "AAA", "ErrB": "BBB", "ErrC": "AAA"}, []*weir.Error{a, b}},
		{"lower-case code", []specErrorRow{{1, "aaa", "ErrA"}}, map[string]string{"ErrA": "aaa"}, []*weir.Error{{Code: "aaa"}}},
	}
	for _, c := range cases {
		if p := specCheckErrorTable(c.rows, c.sentinels, c.errs); len(p) == 0 {
			t.Errorf("%s: not reported", c.name)
		}
	}
}

func TestSpecErrorTableParserRejectsMalformedTables(t *testing.T) {
	header := "| Code | Go sentinel | Meaning | Typical cause | Retry? |\n|---|---|---|---|---|\n"
	good := header + "| `A` | `ErrA` | m | c | No. |\n\ntext\n"
	rows, err := specReadErrorTable(good)
	if err != nil || len(rows) != 1 || rows[0].code != "A" || rows[0].sentinel != "ErrA" {
		t.Fatalf("specReadErrorTable(good) = %+v, %v", rows, err)
	}
	for name, doc := range map[string]string{
		"no table":       "# nothing\n",
		"two tables":     good + good,
		"missing column": header + "| `A` | `ErrA` | m | c |\n",
		"empty cell":     header + "| `A` | | m | c | No. |\n",
		"no separator":   "| Code | Go sentinel | Meaning | Typical cause | Retry? |\n| `A` | `ErrA` | m | c | No. |\n",
	} {
		if _, err := specReadErrorTable(doc); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestSpecEveryResultCodeRoundTripsThroughErrorForCode(t *testing.T) {
	rows, err := specReadErrorTable(specRead(t, specErrorsDoc))
	if err != nil {
		t.Fatalf("%s: %v", specErrorsDoc, err)
	}
	for _, r := range rows {
		e := weir.ErrorForCode(r.code)
		if e == nil {
			t.Errorf("ErrorForCode(%q) = nil", r.code)
			continue
		}
		if e.Code != r.code {
			t.Errorf("ErrorForCode(%q).Code = %q", r.code, e.Code)
		}
		if !errors.Is(wrap(e, "x"), e) {
			t.Errorf("a wrapped %s does not match its sentinel", r.code)
		}
	}
	for _, e := range weir.Errors {
		if got := weir.ErrorForCode(e.Code); got != e {
			t.Errorf("ErrorForCode(%q) = %v, want the sentinel %v", e.Code, got, e)
		}
		if got := weir.ErrorForCode(strings.ToLower(e.Code)); got != nil {
			t.Errorf("ErrorForCode(%q) = %v, want nil: codes are upper-case", strings.ToLower(e.Code), got)
		}
	}
	for _, code := range []string{"", "ERR", "NOSUCHCODE"} {
		if got := weir.ErrorForCode(code); got != nil {
			t.Errorf("ErrorForCode(%q) = %v, want nil", code, got)
		}
	}
}

func TestSpecValidationErrorMatchesInvalidAndTooLargeOnlyWhenOverALimit(t *testing.T) {
	plain := error(&weir.ValidationError{Field: "queue", Problem: "bad"})
	large := error(&weir.ValidationError{Field: "payload", Problem: "big", TooLarge: true})
	if !errors.Is(plain, weir.ErrInvalid) || errors.Is(plain, weir.ErrTooLarge) {
		t.Errorf("plain ValidationError: Is(ErrInvalid) = %v, Is(ErrTooLarge) = %v; want true, false",
			errors.Is(plain, weir.ErrInvalid), errors.Is(plain, weir.ErrTooLarge))
	}
	if !errors.Is(large, weir.ErrInvalid) || !errors.Is(large, weir.ErrTooLarge) {
		t.Errorf("TooLarge ValidationError: Is(ErrInvalid) = %v, Is(ErrTooLarge) = %v; want true, true",
			errors.Is(large, weir.ErrInvalid), errors.Is(large, weir.ErrTooLarge))
	}
	for _, e := range weir.Errors {
		if e != weir.ErrInvalid && e != weir.ErrTooLarge && errors.Is(large, e) {
			t.Errorf("a ValidationError matches %s", e.Code)
		}
	}
}

func TestSpecStatesListsEveryReasonText(t *testing.T) {
	doc := specRead(t, specStatesDoc)
	d, err := specReadDeclared("..")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.reasons) == 0 {
		t.Fatal("found no ReasonText constants in package weir's source")
	}
	for name, text := range d.reasons {
		if !strings.Contains(doc, "| `"+text+"` | `"+name+"` |") {
			t.Errorf("%s: no reason row for %s (%q)", specStatesDoc, name, text)
		}
	}
	shape := weir.DependencyReason("<task>", "<state>")
	if !strings.Contains(doc, "| `"+shape+"` |") {
		t.Errorf("%s: no reason row for DependencyReason, whose shape is %q", specStatesDoc, shape)
	}
}

// specLine returns the value of the one line of doc that starts with prefix.
func specLine(t *testing.T, doc, prefix string) string {
	t.Helper()
	var found []string
	for _, l := range strings.Split(doc, "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			found = append(found, strings.TrimSpace(v))
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d lines start with %q, want 1", specStatesDoc, len(found), prefix)
	}
	return found[0]
}

func TestSpecPlanHashExampleMatchesPlanHash(t *testing.T) {
	doc := specRead(t, specStatesDoc)
	enc, err := hex.DecodeString(specLine(t, doc, "plan-encoding:"))
	if err != nil {
		t.Fatalf("%s: plan-encoding: %v", specStatesDoc, err)
	}
	want := specLine(t, doc, "plan-hash:")
	sum := sha256.Sum256(enc)
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("%s: SHA-256 of plan-encoding is %s, but plan-hash says %s", specStatesDoc, got, want)
	}
	// The example plan exactly as spec/states.md describes it.
	plan := Plan{ID: "wf-1", FailFast: true, UndoOnCancel: true, Tasks: []TaskSpec{
		{Name: "a", Queue: "q", Payload: []byte("hi"), MaxAttempts: 3},
		{Name: "b", Queue: "q", After: []string{"a"}, Always: true, Undo: &UndoSpec{Queue: "u"},
			Priority: -1, Backoff: 500 * time.Millisecond, Timeout: 30 * time.Second},
	}}
	if got := PlanHash(plan); got != want {
		t.Errorf("PlanHash(example) = %s, but %s says %s", got, specStatesDoc, want)
	}
	// The defaults the spec says hash equal, and a one-byte change that must not.
	same := plan
	same.Tasks = slices.Clone(plan.Tasks)
	same.Tasks[0].Backoff = weir.DefaultBackoff
	same.Tasks[1].MaxAttempts = 1
	if got := PlanHash(same); got != want {
		t.Errorf("explicit defaults changed the hash: %s, want %s", got, want)
	}
	other := plan
	other.Tasks = slices.Clone(plan.Tasks)
	other.Tasks[0].Payload = []byte("hj")
	if PlanHash(other) == want {
		t.Error("a different payload byte gave the same hash")
	}
}

func TestSentinelFindsTheCodeAnErrorCarries(t *testing.T) {
	for _, e := range weir.Errors {
		if got := weir.Sentinel(wrap(e, "x")); got != e {
			t.Errorf("Sentinel(wrapped %s) = %v", e.Code, got)
		}
	}
	if got := weir.Sentinel(invalid("t", "f", "bad")); got != weir.ErrInvalid {
		t.Errorf("Sentinel(validation error) = %v, want ErrInvalid", got)
	}
	if got := weir.Sentinel(tooLarge("t", "f", "big")); got != weir.ErrTooLarge {
		t.Errorf("Sentinel(limit error) = %v, want ErrTooLarge", got)
	}
	if got := weir.Sentinel(fmt.Errorf("plain")); got != nil {
		t.Errorf("Sentinel(plain error) = %v, want nil", got)
	}
}
