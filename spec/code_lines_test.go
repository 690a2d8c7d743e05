package spec_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A Code line ends a section of states.md and names, in one hop, where its
// rule lives:
//
//	Code: script `redisstore/lua/scripts/x.lua` · include `redisstore/lua/include/y.lua` · model `engine.(*Model).X` (engine/f.go) · scenarios `a.txt`, `b.txt`.
//
// Parts come in this order, separated by " · ": script (the Lua script of a
// transition; absent for a shared rule), include (Lua include files; optional),
// model (engine methods or functions, each with its file; required), scenarios
// (files of spec/testdata, or `none` with why; required). The line ends with a
// full stop.

// unnamedScenarios are scenario files no Code line of states.md names, and
// why.
var unnamedScenarios = map[string]string{
	"partitions.txt":          "the rules of a namespace of partitions are spec/partitions.md's, not states.md's",
	"schedule_partitions.txt": "the rules of a namespace of partitions are spec/partitions.md's, not states.md's",
}

// section is a heading of states.md and the text under it, up to the next
// heading of any level.
type section struct {
	level int    // 2 for ##, 3 for ###, 4 for ####
	name  string // the heading's text
	line  int    // the heading's line number
	body  []string
}

func readSections(t *testing.T, path string) []section {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []section
	fence := false
	for i, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if !fence && strings.HasPrefix(l, "#") {
			n := len(l) - len(strings.TrimLeft(l, "#"))
			if n >= 2 && n <= 4 && strings.HasPrefix(l[n:], " ") {
				out = append(out, section{level: n, name: strings.TrimSpace(l[n:]), line: i + 1})
				continue
			}
		}
		if len(out) > 0 {
			out[len(out)-1].body = append(out[len(out)-1].body, l)
		}
	}
	return out
}

// lastLine returns the last non-blank line of a section's own text.
func (s section) lastLine() string {
	for i := len(s.body) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(s.body[i]); l != "" {
			return l
		}
	}
	return ""
}

var (
	codePart = regexp.MustCompile("^(script|include|model|scenarios) (.+)$")
	// an item: `name`, and for a model item ` (engine/file.go)` after it
	codeItem = regexp.MustCompile("^`([^`]+)`(?: \\(([^)]+)\\))?$")
	// a model name: engine.(*Model).Method or engine.Func
	modelName = regexp.MustCompile(`^engine\.(?:\(\*(Model)\)\.)?([A-Za-z_][A-Za-z0-9_]*)$`)
)

// checkCodeLine checks one Code line against the tree whose root is root:
// its form, and that every script, include, model function and scenario it
// names exists. It returns the scenario files it names and one message per
// problem.
func checkCodeLine(root, line string) (scenarios []string, problems []string) {
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	rest, ok := strings.CutPrefix(line, "Code: ")
	if !ok || !strings.HasSuffix(rest, ".") {
		bad("%q is not `Code: <parts>.`", line)
		return nil, problems
	}
	rest = strings.TrimSuffix(rest, ".")
	order := map[string]int{"script": 0, "include": 1, "model": 2, "scenarios": 3}
	seen := map[string]bool{}
	last := -1
	for _, p := range strings.Split(rest, " · ") {
		m := codePart.FindStringSubmatch(p)
		if m == nil {
			bad("part %q is not `script|include|model|scenarios <items>`", p)
			continue
		}
		kind := m[1]
		if order[kind] <= last {
			bad("part %q is out of order or repeated (script, include, model, scenarios)", kind)
		}
		last = order[kind]
		seen[kind] = true
		if kind == "scenarios" && strings.HasPrefix(m[2], "none (") {
			continue
		}
		for _, it := range strings.Split(m[2], ", ") {
			im := codeItem.FindStringSubmatch(it)
			if im == nil {
				bad("%s item %q is not a `name`", kind, it)
				continue
			}
			name, file := im[1], im[2]
			if (file != "") != (kind == "model") {
				bad("%s item %q: a model item, and only one, names its file in parentheses", kind, it)
				continue
			}
			switch kind {
			case "script", "include":
				dir := "redisstore/lua/" + map[string]string{"script": "scripts", "include": "include"}[kind] + "/"
				if !strings.HasPrefix(name, dir) || !strings.HasSuffix(name, ".lua") {
					bad("%s %q is not a file of %s", kind, name, dir)
				} else if _, err := os.Stat(filepath.Join(root, name)); err != nil {
					bad("%s %s does not exist", kind, name)
				}
			case "model":
				if err := findFunc(root, name, file); err != nil {
					bad("model %s: %v", name, err)
				}
			case "scenarios":
				if !strings.HasSuffix(name, ".txt") || strings.Contains(name, "/") {
					bad("scenario %q is not a file name of spec/testdata", name)
				} else if _, err := os.Stat(filepath.Join(root, "spec", "testdata", name)); err != nil {
					bad("scenario spec/testdata/%s does not exist", name)
				}
				scenarios = append(scenarios, name)
			}
		}
	}
	for _, k := range []string{"model", "scenarios"} {
		if !seen[k] {
			bad("no %s part", k)
		}
	}
	if !seen["script"] && !seen["include"] {
		bad("no script and no include part")
	}
	return scenarios, problems
}

// findFunc reports whether file (engine/<x>.go, relative to root) declares
// name: engine.(*Model).M, a method of *Model, or engine.F, a function.
func findFunc(root, name, file string) error {
	m := modelName.FindStringSubmatch(name)
	if m == nil {
		return fmt.Errorf("not engine.(*Model).Method or engine.Func")
	}
	if !strings.HasPrefix(file, "engine/") || strings.Count(file, "/") != 1 || !strings.HasSuffix(file, ".go") {
		return fmt.Errorf("%s is not a file of package engine", file)
	}
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, file), nil, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	recv, fn := m[1], m[2]
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn {
			continue
		}
		if recv == "" && fd.Recv == nil {
			return nil
		}
		if recv != "" && fd.Recv != nil && len(fd.Recv.List) == 1 {
			if st, ok := fd.Recv.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := st.X.(*ast.Ident); ok && id.Name == recv {
					return nil
				}
			}
		}
	}
	return fmt.Errorf("not declared in %s", file)
}

// TestStatesCodeLines checks that every section of the Transitions part of
// spec/states.md ends with a Code line, that every Code line anywhere in it
// names a script, include, model function and scenario that exist, and that
// every scenario file is named by one (or is in unnamedScenarios).
func TestStatesCodeLines(t *testing.T) {
	root := ".."
	named := map[string]bool{}
	inTransitions := false
	codeLines := 0
	for _, s := range readSections(t, "states.md") {
		if s.level == 2 {
			inTransitions = s.name == "Transitions"
		}
		for i, l := range s.body {
			if !strings.HasPrefix(strings.TrimSpace(l), "Code:") {
				continue
			}
			codeLines++
			if strings.TrimSpace(l) != s.lastLine() {
				t.Errorf("states.md:%d: section %q: a Code line is the last line of its section", s.line+1+i, s.name)
			}
			scen, problems := checkCodeLine(root, strings.TrimSpace(l))
			for _, p := range problems {
				t.Errorf("states.md:%d: section %q: %s", s.line+1+i, s.name, p)
			}
			for _, n := range scen {
				named[n] = true
			}
		}
		if inTransitions && s.level == 3 && !strings.HasPrefix(s.lastLine(), "Code: ") {
			t.Errorf("states.md:%d: transition section %q does not end with a Code line", s.line, s.name)
		}
	}
	if codeLines == 0 {
		t.Fatal("states.md has no Code line")
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files (%v)", err)
	}
	for _, f := range files {
		n := filepath.Base(f)
		why, allowed := unnamedScenarios[n]
		switch {
		case named[n] && allowed:
			t.Errorf("%s is named by a Code line: take it out of unnamedScenarios (%s)", n, why)
		case !named[n] && !allowed:
			t.Errorf("scenario %s is named by no Code line of states.md: name it where its rule is", n)
		}
	}
	for n := range unnamedScenarios {
		if _, err := os.Stat(filepath.Join("testdata", n)); err != nil {
			t.Errorf("unnamedScenarios lists %s, which does not exist", n)
		}
	}
}

// TestCheckCodeLine checks that checkCodeLine finds a name that does not
// exist, of each kind, and a line out of form.
func TestCheckCodeLine(t *testing.T) {
	good := "Code: script `redisstore/lua/scripts/finish.lua` · model `engine.(*Model).Finish` (engine/model_jobs.go) · scenarios `finish_and_claim.txt`."
	if _, p := checkCodeLine("..", good); len(p) != 0 {
		t.Fatalf("good line: %v", p)
	}
	for _, tc := range []struct{ line, want string }{
		{"Code: script `redisstore/lua/scripts/finnish.lua` · model `engine.(*Model).Finish` (engine/model_jobs.go) · scenarios `finish_and_claim.txt`.", "finnish.lua does not exist"},
		{"Code: include `redisstore/lua/include/nope.lua` · model `engine.(*Model).Finish` (engine/model_jobs.go) · scenarios `finish_and_claim.txt`.", "nope.lua does not exist"},
		{"Code: script `redisstore/lua/scripts/finish.lua` · model `engine.(*Model).Finnish` (engine/model_jobs.go) · scenarios `finish_and_claim.txt`.", "not declared in engine/model_jobs.go"},
		{"Code: script `redisstore/lua/scripts/finish.lua` · model `engine.(*Model).Finish` (engine/model.go) · scenarios `finish_and_claim.txt`.", "not declared in engine/model.go"},
		{"Code: script `redisstore/lua/scripts/finish.lua` · model `engine.ValidateSignal` (engine/model_jobs.go) · scenarios `finish_and_claim.txt`.", "not declared"},
		{"Code: script `redisstore/lua/scripts/finish.lua` · model `engine.(*Model).Finish` (engine/model_jobs.go) · scenarios `finish_and_clam.txt`.", "finish_and_clam.txt does not exist"},
		{"Code: script `redisstore/lua/scripts/finish.lua` · scenarios `finish_and_claim.txt`.", "no model part"},
		{"Code: model `engine.(*Model).Finish` (engine/model_jobs.go) · script `redisstore/lua/scripts/finish.lua` · scenarios `finish_and_claim.txt`.", "out of order"},
		{"Code: script `redisstore/lua/scripts/finish.lua` · model `engine.(*Model).Finish` (engine/model_jobs.go) · scenarios `finish_and_claim.txt`", "is not `Code: <parts>.`"},
	} {
		_, p := checkCodeLine("..", tc.line)
		if !strings.Contains(strings.Join(p, "\n"), tc.want) {
			t.Errorf("%s\n  problems %q, want one with %q", tc.line, p, tc.want)
		}
	}
}

// TestNoRuleNumbers checks that the spec and its scenarios cite states.md by
// section (and a table's step or row), not by "rule N" numbers, which
// states.md does not have.
func TestNoRuleNumbers(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	mds, _ := filepath.Glob("*.md")
	ruleN := regexp.MustCompile(`(?i)\brules? [0-9]`)
	for _, f := range append(files, mds...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if m := ruleN.FindString(l); m != "" {
				t.Errorf("%s:%d: %q: cite a section of states.md, e.g. (states.md, Task ended, step 2)", f, i+1, m)
			}
		}
	}
}
