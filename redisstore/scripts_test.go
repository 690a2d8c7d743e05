package redisstore

import (
	"context"
	"github.com/weirflow/weir"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	glua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/weirflow/weir/engine"
)

// TestScriptHeaders: each transition's file starts with its versioned name
// and a header (KEYS, ARGV, Reply) and includes call.lua; each include
// file starts with its own name; every file on disk is registered.
func TestScriptHeaders(t *testing.T) {
	entries, err := os.ReadDir(luaScripts)
	if err != nil {
		t.Fatal(err)
	}
	sources := newLuaSources(os.DirFS(luaDir))
	var files, registered []string
	for _, e := range entries {
		files = append(files, strings.TrimSuffix(e.Name(), ".lua"))
	}
	for _, d := range scriptDefs {
		registered = append(registered, d.name)
		f, err := sources.read("scripts/" + d.name + ".lua")
		if err != nil {
			t.Fatal(err)
		}
		src, incs := f.text, f.includes
		if !strings.HasPrefix(src, "-- weir"+strconv.Itoa(ProtocolVersion)+"_"+d.name+": ") {
			t.Errorf("%s: the header does not start with its versioned name", d.name)
		}
		for _, want := range []string{"\n-- KEYS[1] ", "\n-- ARGV[4", "\n-- Reply: "} {
			if d.name == "queues" && want == "\n-- ARGV[4" {
				continue
			}
			if !strings.Contains(src, want) {
				t.Errorf("%s: the header lacks %q", d.name, strings.TrimSpace(want))
			}
		}
		if len(incs) == 0 || incs[0] != "call.lua" || !strings.Contains(src, "\nbegin(KEYS, ARGV)\n") {
			t.Errorf("%s: does not include call.lua first and begin(KEYS, ARGV)", d.name)
		}
		if !strings.Contains(scripts[d.name].text().src, "-- ---- scripts/"+d.name+".lua\n") {
			t.Errorf("%s: the built script lacks its source", d.name)
		}
	}
	slices.Sort(files)
	slices.Sort(registered)
	if !slices.Equal(files, registered) {
		t.Errorf("scripts on disk %v, registered %v", files, registered)
	}
	incs, _ := os.ReadDir(luaInclude)
	for _, e := range incs {
		f, _ := sources.read("include/" + e.Name())
		if src := f.text; !strings.HasPrefix(src, "-- "+e.Name()+": ") {
			t.Errorf("include/%s does not start with its name", e.Name())
		}
	}
}

// luaBuiltins are the globals a script may read: what Redis 7 and
// miniredis both have (shared/lua-compat.md).
var luaBuiltins = []string{"redis", "KEYS", "ARGV", "string", "table", "math", "tonumber", "tostring",
	"type", "ipairs", "pairs", "unpack", "select", "next", "error", "pcall"}

// compileLua compiles src with gopher-lua.
func compileLua(t *testing.T, name, src string) *glua.FunctionProto {
	t.Helper()
	if strings.HasPrefix(src, "#!") {
		// the library's shebang line (FUNCTION LOAD reads it): keep the line numbers
		src = "--" + src
	}
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	proto, err := glua.Compile(chunk, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return proto
}

// walkProtos calls f for p and every function defined in it.
func walkProtos(p *glua.FunctionProto, f func(*glua.FunctionProto)) {
	f(p)
	for _, c := range p.FunctionPrototypes {
		walkProtos(c, f)
	}
}

// Lua 5.1 opcodes and operand fields (gopher-lua's encoding).
func opCode(inst uint32) int { return int(inst >> 26) }
func opBx(inst uint32) int   { return int(inst & 0x3ffff) }
func opB(inst uint32) int    { return int(inst & 0x1ff) }

// TestScriptsResolve: every built script and the library read no global
// but the builtins and write none (a helper left out of the includes, or
// misspelt, fails here on every backend), and no function has more than
// Lua 5.1's 60 upvalues.
func TestScriptsResolve(t *testing.T) {
	srcs := map[string]string{"library": library.src}
	for _, d := range scriptDefs {
		srcs[d.name] = scripts[d.name].text().src
	}
	for name, src := range srcs {
		proto := compileLua(t, name, src)
		walkProtos(proto, func(p *glua.FunctionProto) {
			if p.NumUpvalues > 60 {
				t.Errorf("%s: a function at line %d has %d upvalues, Lua 5.1 allows 60", name, p.LineDefined, p.NumUpvalues)
			}
			for _, inst := range p.Code {
				op := opCode(inst)
				if op != glua.OP_GETGLOBAL && op != glua.OP_SETGLOBAL {
					continue
				}
				g := p.Constants[opBx(inst)].String()
				if op == glua.OP_SETGLOBAL {
					t.Errorf("%s: line %d writes the global %q", name, p.LineDefined, g)
				} else if !slices.Contains(luaBuiltins, g) {
					t.Errorf("%s: reads the global %q, which is not defined", name, g)
				}
			}
		})
	}
}

// TestCallStateIsReset: in the function library, whose top level runs once
// and whose locals outlive a call, every top-level local that a function
// assigns is assigned by begin too, so that no call sees what the one
// before it left.
func TestCallStateIsReset(t *testing.T) {
	proto := compileLua(t, "library", library.src)
	beginLine := 0
	for i, line := range strings.Split(library.src, "\n") {
		// begin is a local function, or a local assigned a function in a
		// do block (call.lua: its own upvalues keep what the last call
		// parsed)
		if strings.HasPrefix(line, "local function begin(") || strings.HasPrefix(strings.TrimSpace(line), "begin = function(") {
			beginLine = i + 1
		}
	}
	// assigned: the upvalues p and the functions in it assign (by name;
	// only those named as top-level locals count)
	assigned := func(p *glua.FunctionProto) map[string]bool {
		out := map[string]bool{}
		walkProtos(p, func(q *glua.FunctionProto) {
			for _, inst := range q.Code {
				if opCode(inst) == glua.OP_SETUPVAL {
					out[q.DbgUpvalues[opB(inst)]] = true
				}
			}
		})
		return out
	}
	top := map[string]bool{}
	for _, l := range proto.DbgLocals {
		top[l.Name] = true
	}
	var reset map[string]bool
	for _, p := range proto.FunctionPrototypes {
		if p.LineDefined == beginLine {
			reset = assigned(p)
		}
	}
	if len(reset) < 10 {
		t.Fatalf("begin (line %d) assigns only %v", beginLine, reset)
	}
	for _, p := range proto.FunctionPrototypes {
		if p.LineDefined == beginLine {
			continue
		}
		for name := range assigned(p) {
			if top[name] && !reset[name] {
				t.Errorf("the function at line %d assigns the top-level local %q, which begin does not reset", p.LineDefined, name)
			}
		}
	}
}

// TestResultCodes: every code a script returns is a sentinel's code.
func TestResultCodes(t *testing.T) {
	code := regexp.MustCompile(`error_reply\('([A-Z]+) |code = '([A-Z]+)'|'(JOBEXISTS)'`)
	n := 0
	for _, d := range scriptDefs {
		for _, m := range code.FindAllStringSubmatch(scripts[d.name].text().src, -1) {
			c := m[1] + m[2] + m[3]
			n++
			// PENDING: answered by callMany (drain.go); NOINDEX: by list.go,
			// as ErrNeedsMigration
			if weir.ErrorForCode(c) == nil && c != "PENDING" && c != "NOINDEX" {
				t.Errorf("%s returns code %s, which engine.Errors does not have", d.name, c)
			}
		}
	}
	if n < 5 {
		t.Errorf("found only %d result codes", n)
	}
}

// TestScriptsCompile loads every transition into the server: the library
// where it has Functions (FUNCTION LIST then lists each function with its
// flags), the scripts where not.
func TestScriptsCompile(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	ctx := context.Background()
	if err := e.store.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if e.mini != nil {
		if e.store.CallPath() != "scripts" {
			t.Fatalf("miniredis path %s", e.store.CallPath())
		}
		for _, d := range scriptDefs {
			ok, err := e.rdb.ScriptExists(ctx, scripts[d.name].text().sha).Result()
			if err != nil || !ok[0] {
				t.Errorf("%s not loaded: %v", d.name, err)
			}
		}
		return
	}
	if e.store.CallPath() != "functions" {
		t.Fatalf("redis-server path %s", e.store.CallPath())
	}
	libs, err := e.rdb.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: library.name}).Result()
	if err != nil || len(libs) != 1 {
		t.Fatalf("FUNCTION LIST %s: %v %v", library.name, libs, err)
	}
	flags := map[string][]string{}
	for _, f := range libs[0].Functions {
		flags[f.Name] = f.Flags
	}
	for _, d := range scriptDefs {
		got, ok := flags[scripts[d.name].fn]
		if !ok {
			t.Errorf("%s is not a function of the library", d.name)
			continue
		}
		if slices.Contains(got, "no-writes") != d.readOnly || slices.Contains(got, "allow-oom") != d.allowFull {
			t.Errorf("%s has the flags %v", d.name, got)
		}
	}
}

// TestLuaConstantsMatchEngine: the constants and reason texts written in
// Lua are the engine's.
func TestLuaConstantsMatchEngine(t *testing.T) {
	call, err := luaFS.ReadFile("lua/include/call.lua")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"local SWEEP_PER_CLAIM = " + strconv.Itoa(engine.SweepPerClaim) + " ",
		"local PRIO_UNIT = " + strconv.Itoa(1<<40) + " ",
	} {
		if !strings.Contains(string(call), want) {
			t.Errorf("call.lua does not contain %q", want)
		}
	}
	all := library.src
	for _, want := range []string{
		"(pr + " + strconv.Itoa(-weir.MinPriority) + ") * " + strconv.Itoa(1<<40),
		"'" + weir.ReasonTextWorkflowCancelled + "'",
		"'" + weir.ReasonTextFailFast + "'",
		"'" + weir.ReasonTextJobCancelled + "'",
		"'" + weir.ReasonTextPurged + "'",
		"'" + weir.ReasonTextLeaseExpired + "'",
		"'dependency ' .. task_name(w, k) .. ' ' .. TASK_STATE[kb]",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the library does not contain %q", want)
		}
	}
	if got := weir.DependencyReason("x", weir.Failed); got != "dependency x failed" {
		t.Errorf("weir.DependencyReason changed: %q", got)
	}
	if (weir.MaxPriority-weir.MinPriority+1)*(1<<40) >= 1<<53 {
		t.Error("ready scores would not stay exact integers")
	}
}
