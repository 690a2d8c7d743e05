package lua

import (
	"slices"
	"strings"
	"testing"

	glua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// luaBuiltins are the globals Redis 7 and miniredis give every script.
var luaBuiltins = map[string]bool{
	"KEYS": true, "ARGV": true, "redis": true, "string": true, "table": true, "math": true,
	"tonumber": true, "tostring": true, "ipairs": true, "pairs": true, "unpack": true,
	"type": true, "select": true, "error": true, "pcall": true, "next": true, "assert": true,
	"cjson": true, "bit": true, "struct": true, "cmsgpack": true, "rawget": true, "rawset": true,
}

// scriptGlobals compiles src (Lua 5.1, gopher-lua's compiler) and returns
// the globals it reads and the globals it writes, by name.
func scriptGlobals(t *testing.T, name, src string) (reads, writes []string) {
	t.Helper()
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	proto, err := glua.Compile(chunk, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var walk func(p *glua.FunctionProto)
	walk = func(p *glua.FunctionProto) {
		for _, inst := range p.Code {
			op := int(inst >> 26)
			if op != glua.OP_GETGLOBAL && op != glua.OP_SETGLOBAL {
				continue
			}
			g := p.Constants[int(inst&0x3ffff)].String()
			if op == glua.OP_GETGLOBAL {
				reads = append(reads, g)
			} else {
				writes = append(writes, g)
			}
		}
		for _, c := range p.FunctionPrototypes {
			walk(c)
		}
	}
	walk(proto)
	return reads, writes
}

// TestScriptsResolve: every name a spliced script reads is one of its own
// locals or a builtin, and it writes no global. A helper left out of the
// splice (or misspelt) would be a global read, nil at run time.
func TestScriptsResolve(t *testing.T) {
	for _, d := range scriptDefs {
		reads, writes := scriptGlobals(t, d.name, scripts[d.name].src)
		for _, g := range reads {
			if !luaBuiltins[g] {
				t.Errorf("%s reads undefined global %q", d.name, g)
			}
		}
		if len(writes) > 0 {
			t.Errorf("%s writes globals %v", d.name, writes)
		}
	}
}

// TestScriptsResolveCatchesMissing: the check above fails for a script
// that calls a helper its splice left out, or an unknown name.
func TestScriptsResolveCatchesMissing(t *testing.T) {
	src := "local function a() return 1 end\nreturn a() + b()\n"
	reads, _ := scriptGlobals(t, "probe", src)
	if !slices.Contains(reads, "b") || slices.Contains(reads, "a") {
		t.Fatalf("global reads %v, want b and not a", reads)
	}
	chunks, err := includeChunks("core.lua")
	if err != nil {
		t.Fatal(err)
	}
	var src2 strings.Builder
	for _, c := range needed(chunks, luaNames("hset(K_SEQ, 'x', '1')")) {
		src2.WriteString(c.text)
	}
	got := src2.String()
	if !strings.Contains(got, "local function hset(") || strings.Contains(got, "local function hload(") {
		t.Fatalf("splice for hset: want hset and not hload:\n%s", got)
	}
	reads, _ = scriptGlobals(t, "probe2", got+"return hload('k')\n")
	if !slices.Contains(reads, "hload") {
		t.Fatalf("a call of a helper left out is not a global read: %v", reads)
	}
}

// TestSpliceKeepsOnlyUsed: scripts get the helpers they use and not the
// others; the read-only ones leave out the write-back machinery.
func TestSpliceKeepsOnlyUsed(t *testing.T) {
	for _, d := range scriptDefs {
		src := scripts[d.name].src
		if !d.readOnly && !strings.Contains(src, "local function finalize()") {
			t.Errorf("%s: finalize missing", d.name)
		}
	}
	if s := scripts["queues"].src; strings.Contains(s, "local function task_ended") || strings.Contains(s, "local function lease_job(") {
		t.Error("queues splices workflow or claim code it does not use")
	}
	if s := scripts["enqueue"].src; strings.Contains(s, "start_compensation") {
		t.Error("enqueue splices compensation")
	}
	if s := scripts["finish"].src; !strings.Contains(s, "task_ended = function") || !strings.Contains(s, "local task_ended, undo_ended") {
		t.Error("finish lacks the task cascade or its forward declaration")
	}
}

// TestLuaNames: fields, table keys, strings and comments are not names.
func TestLuaNames(t *testing.T) {
	got := luaNames("local x = {a = b, c == d} -- e\nf.g(h:i('j'), k .. l, [[m]], [x] = n) --[[ o ]]\n")
	var names []string
	for n := range got {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"b", "c", "d", "f", "h", "k", "l", "n", "x"}
	if !slices.Equal(names, want) {
		t.Fatalf("names %v, want %v", names, want)
	}
}
