package redisstore

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// TestLuaPruneKeepsWhatIsNamed: a script keeps the definitions of its
// include files that its own code names, and those they name; a table
// used whole keeps every member; a definition whose value calls something
// stays unnamed; the rest goes, its comment with it, and the file's
// marker line stays.
func TestLuaPruneKeepsWhatIsNamed(t *testing.T) {
	inc := `-- helper is named by used only
local function helper() return 1 end
-- used is named by the script
local function used(a)
  local unused2 = 3 -- a local inside: not a definition
  return helper() + a
end
-- unused is named by nobody
local function unused() return used(2) end
local T = {}
function T.a() return 1 end
function T.b() return used(1) end
T.C = 'x'
T.D, T.E = 1, 2
local U = {k = 1}
function U.z() return 'z' end
local EFFECT = redis.call('GET', 'k')
local LIST = {'a', function() return unused() end}
`
	script := "--!include h.lua\nreturn T.b() .. T.D .. tostring(next(U))\n"
	src := fstest.MapFS{
		"include/h.lua": &fstest.MapFile{Data: []byte(inc)},
		"scripts/s.lua": &fstest.MapFile{Data: []byte(script)},
	}
	b, err := newLuaBuild(src, []scriptDef{{name: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	got, rep := luaPrune(b.whole("s"))
	wantKept := []string{"helper", "used", "T", "T.b", "T.D", "T.E", "U", "U.z"}
	wantDropped := []string{"IS_FUNCTION", "unused", "T.a", "T.C", "LIST"}
	slices.Sort(wantKept)
	slices.Sort(wantDropped)
	slices.Sort(rep.kept)
	slices.Sort(rep.dropped)
	if !slices.Equal(rep.kept, wantKept) || !slices.Equal(rep.dropped, wantDropped) {
		t.Errorf("kept %v dropped %v, want kept %v dropped %v", rep.kept, rep.dropped, wantKept, wantDropped)
	}
	for _, gone := range []string{"unused is named by nobody", "local function unused", "function T.a", "T.C =", "local LIST"} {
		if strings.Contains(got, gone) {
			t.Errorf("the script still has %q:\n%s", gone, got)
		}
	}
	for _, kept := range []string{"-- ---- include/h.lua\n", "-- helper is named by used only\n", "local EFFECT = redis.call", "local unused2 = 3", "T.D, T.E = 1, 2\n"} {
		if !strings.Contains(got, kept) {
			t.Errorf("the script lost %q:\n%s", kept, got)
		}
	}
	if lib := b.library; !strings.Contains(lib, "local function unused") || !strings.Contains(lib, "function T.a") {
		t.Errorf("the library lost a definition:\n%s", lib)
	}
}

// TestLuaHoistLocals: the include files' top-level locals are declared
// first, the ones functions capture most last, and their statements
// become assignments; a name named before its declaration (a global
// there) leaves the script as it was.
func TestLuaHoistLocals(t *testing.T) {
	src := "-- head\nlocal A = 1\nlocal B, C\nlocal function f() return A + C end\nlocal function g() return C end\n-- ---- scripts/s.lua\nlocal x = f()\nreturn x\n"
	want := "-- head\nlocal B, A, f, g, C\nA = 1\n\nfunction f() return A + C end\nfunction g() return C end\n-- ---- scripts/s.lua\nlocal x = f()\nreturn x\n"
	if got := luaHoistLocals(src); got != want {
		t.Errorf("hoisted\n%s\nwant\n%s", got, want)
	}
	for _, tc := range []struct {
		src  string
		same bool
	}{
		{"local function f() return A end\nlocal A = 1\n", true},              // A is a global in f
		{"local A = 1\nlocal A = 2\n", true},                                  // twice
		{"local function f(A) return A end\nlocal function A() end\n", false}, // a parameter: fine
	} {
		if got := luaHoistLocals(tc.src); (got == tc.src) != tc.same {
			t.Errorf("%q hoisted to %q", tc.src, got)
		}
	}
}

// luaGlobals returns the global names a chunk reads or writes, as
// gopher-lua compiles it (a name no local is in scope for).
func luaGlobals(t *testing.T, name, src string) map[string]bool {
	t.Helper()
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out := map[string]bool{}
	var walk func(p *lua.FunctionProto)
	walk = func(p *lua.FunctionProto) {
		for _, inst := range p.Code {
			if op := int(inst >> 26); op == lua.OP_GETGLOBAL || op == lua.OP_SETGLOBAL {
				out[p.Constants[int(inst&0x3ffff)].String()] = true
			}
		}
		for _, c := range p.FunctionPrototypes {
			walk(c)
		}
	}
	walk(proto)
	return out
}

// luaMembers returns how often a chunk names each member "T.f" of a table
// named by a name (T.f, T:f(), its definitions included), and how often
// its top level defines it (function T.f, T.f = ...).
func luaMembers(t *testing.T, name, src string) (named, defined map[string]int) {
	t.Helper()
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	member := func(obj ast.Expr, key string) string {
		if id, ok := obj.(*ast.IdentExpr); ok {
			return id.Value + "." + key
		}
		return ""
	}
	named, defined = map[string]int{}, map[string]int{}
	for _, st := range chunk {
		switch s := st.(type) {
		case *ast.FuncDefStmt:
			if a, ok := s.Name.Func.(*ast.AttrGetExpr); ok {
				if k, ok := a.Key.(*ast.StringExpr); ok {
					defined[member(a.Object, k.Value)]++
				}
			}
		case *ast.AssignStmt:
			for _, l := range s.Lhs {
				if a, ok := l.(*ast.AttrGetExpr); ok {
					if k, ok := a.Key.(*ast.StringExpr); ok {
						defined[member(a.Object, k.Value)]++
					}
				}
			}
		}
	}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return
			}
			switch e := v.Interface().(type) {
			case *ast.AttrGetExpr:
				if k, ok := e.Key.(*ast.StringExpr); ok {
					named[member(e.Object, k.Value)]++
				}
			case *ast.FuncCallExpr:
				if e.Receiver != nil {
					named[member(e.Receiver, e.Method)]++
				}
			}
			walk(v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(chunk))
	return named, defined
}

// TestLuaScriptsDefineWhatTheyName: every built script, checked by
// gopher-lua's parser and compiler rather than by the build's own reading
// of Lua, defines every name it uses that the script with every
// definition defines: it reads or writes no global that script does not
// (a local dropped or declared in another order would be one), and it
// defines every member of a table it names that that script defines at
// its top level.
func TestLuaScriptsDefineWhatTheyName(t *testing.T) {
	for _, d := range scriptDefs {
		whole, built := luaBuilt.whole(d.name), luaBuilt.script(d.name)
		wg, bg := luaGlobals(t, d.name+" whole", whole), luaGlobals(t, d.name, built)
		for g := range bg {
			if !wg[g] {
				t.Errorf("%s: the built script names %s, which it does not define (the script with every definition does)", d.name, g)
			}
		}
		_, wdef := luaMembers(t, d.name+" whole", whole)
		named, def := luaMembers(t, d.name, built)
		for m := range named {
			if wdef[m] > 0 && def[m] == 0 {
				t.Errorf("%s: the built script names %s, which it does not define (the script with every definition does)", d.name, m)
			}
		}
	}
}

// TestLuaScriptsCarryOnlyWhatTheyName: a script does not carry a
// definition of its include files that nothing in it needs. Read by
// gopher-lua's parser, not the build's: from the script's own statements
// and those of its include files that are not definitions (or whose value
// calls something), following what each names (a name, a member T.f or
// T:f(), a table used whole naming all its members), every definition of
// the script is reached.
func TestLuaScriptsCarryOnlyWhatTheyName(t *testing.T) {
	for _, d := range scriptDefs {
		whole := luaBuilt.whole(d.name)
		_, rep := luaPrune(whole)
		built := luaBuilt.script(d.name)
		if unreached := luaUnreached(t, d.name, built); len(unreached) > 0 {
			t.Errorf("%s: the built script carries definitions that nothing in it needs: %v", d.name, unreached)
		}
		if len(rep.dropped) > 0 && len(built) >= len(whole) {
			t.Errorf("%s: dropped %d definitions but is %d bytes, the script with every definition %d", d.name, len(rep.dropped), len(built), len(whole))
		}
		t.Logf("%s: %d bytes of %d, %d definitions kept, %d dropped", d.name, len(built), len(whole), len(rep.kept), len(rep.dropped))
	}
}

// luaUnreached returns the top-level definitions of src, a built script,
// that nothing reaches (TestLuaScriptsCarryOnlyWhatTheyName).
func luaUnreached(t *testing.T, name, src string) []string {
	t.Helper()
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	own := strings.Count(src[:strings.Index(src, "\n-- ---- scripts/")+1], "\n") + 1 // its first line, 1-based
	defName := func(e ast.Expr) string {
		switch x := e.(type) {
		case *ast.IdentExpr:
			return x.Value
		case *ast.AttrGetExpr:
			id, ok1 := x.Object.(*ast.IdentExpr)
			k, ok2 := x.Key.(*ast.StringExpr)
			if ok1 && ok2 {
				return id.Value + "." + k.Value
			}
		}
		return ""
	}
	// names collects what v names; calls is set when it calls something
	// outside a function body
	var names func(v reflect.Value, out map[string]bool, calls *bool, inFn bool)
	names = func(v reflect.Value, out map[string]bool, calls *bool, inFn bool) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return
			}
			switch e := v.Interface().(type) {
			case *ast.IdentExpr:
				out[e.Value] = true
				return
			case *ast.AttrGetExpr:
				if n := defName(e); n != "" {
					out[n] = true
					tbl, _, _ := strings.Cut(n, ".")
					out[tbl+"."] = true
					return
				}
			case *ast.FuncCallExpr:
				if !inFn && calls != nil {
					*calls = true
				}
				if id, ok := e.Receiver.(*ast.IdentExpr); ok {
					out[id.Value+"."+e.Method] = true
					out[id.Value+"."] = true
					for _, a := range e.Args {
						names(reflect.ValueOf(a), out, calls, inFn)
					}
					return
				}
			case *ast.FunctionExpr:
				inFn = true
			}
			names(v.Elem(), out, calls, inFn)
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					names(v.Field(i), out, calls, inFn)
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				names(v.Index(i), out, calls, inFn)
			}
		}
	}
	type stmt struct {
		defs  []string
		root  bool
		names map[string]bool
	}
	var stmts []stmt
	byDef := map[string][]int{}
	members := map[string][]int{}
	for _, st := range chunk {
		s := stmt{names: map[string]bool{}}
		var calls bool
		switch x := st.(type) {
		case *ast.FuncDefStmt:
			if n := defName(x.Name.Func); n != "" && x.Name.Receiver == nil {
				s.defs = []string{n}
				names(reflect.ValueOf(x.Func), s.names, &calls, true)
				if tbl, _, ok := strings.Cut(n, "."); ok {
					s.names[tbl+"."] = true
				}
			} else {
				s.root = true
			}
		case *ast.AssignStmt:
			for _, l := range x.Lhs {
				n := defName(l)
				if n == "" {
					s.root = true
				}
				s.defs = append(s.defs, n)
				if tbl, _, ok := strings.Cut(n, "."); ok {
					s.names[tbl+"."] = true
				}
			}
			names(reflect.ValueOf(x.Rhs), s.names, &calls, false)
		case *ast.LocalAssignStmt:
			s.defs = x.Names
			names(reflect.ValueOf(x.Exprs), s.names, &calls, false)
		default:
			s.root = true
		}
		if s.root || calls || st.Line() >= own {
			s.root = true
			names(reflect.ValueOf(st), s.names, nil, false)
		}
		for _, n := range s.defs {
			byDef[n] = append(byDef[n], len(stmts))
			if tbl, _, ok := strings.Cut(n, "."); ok {
				members[tbl] = append(members[tbl], len(stmts))
			}
		}
		stmts = append(stmts, s)
	}
	reached := make([]bool, len(stmts))
	var work []int
	reach := func(is []int) {
		for _, i := range is {
			if !reached[i] {
				reached[i] = true
				work = append(work, i)
			}
		}
	}
	for i, s := range stmts {
		if s.root {
			reach([]int{i})
		}
	}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		for n := range stmts[i].names {
			tbl, f, member := strings.Cut(n, ".")
			switch {
			case member && f == "":
				reach(byDef[tbl])
			case member:
				reach(byDef[n])
			default:
				reach(byDef[n])
				reach(members[n])
			}
		}
	}
	var out []string
	for i, s := range stmts {
		if !reached[i] && len(s.names) > 0 || !reached[i] && strings.Contains(strings.Join(s.defs, ","), ".") {
			out = append(out, s.defs...)
		}
	}
	return out
}
