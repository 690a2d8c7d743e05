package lua

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weirflow/weir/engine"
)

// TestScriptHeaders: each script's header declares as many KEYS as the Go
// caller passes, lists ARGV and a reply, and is registered under its
// versioned name.
func TestScriptHeaders(t *testing.T) {
	entries, err := luaFS.ReadDir("scripts")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, strings.TrimSuffix(e.Name(), ".lua"))
	}
	var registered []string
	k, _ := newKeys("default", 0)
	keyLine := regexp.MustCompile(`(?m)^-- KEYS\[(\d+)\] `)
	for _, d := range scriptDefs {
		registered = append(registered, d.name)
		b, err := luaFS.ReadFile("scripts/" + d.name + ".lua")
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		header, _, _ := strings.Cut(src, "--!include")
		if !strings.HasPrefix(header, "-- weir"+strconv.Itoa(ProtocolVersion)+"_"+d.name+": ") {
			t.Errorf("%s: header does not start with its versioned name", d.name)
		}
		decl := keyLine.FindAllStringSubmatch(header, -1)
		for i, m := range decl {
			if m[1] != strconv.Itoa(i+1) {
				t.Errorf("%s: KEYS[%s] declared in position %d", d.name, m[1], i+1)
			}
		}
		if len(decl) != d.keys || len(k.common()) != d.keys {
			t.Errorf("%s: header declares %d KEYS, the table says %d, the caller passes %d", d.name, len(decl), d.keys, len(k.common()))
		}
		if !strings.Contains(header, "-- ARGV[1]") || !strings.Contains(header, "-- Reply:") {
			t.Errorf("%s: header lacks ARGV or Reply", d.name)
		}
		sc := scripts[d.name]
		if sc.name != "weir1_"+d.name || strings.Contains(sc.src, "--!include") {
			t.Errorf("%s: name %q, or an include was not spliced", d.name, sc.name)
		}
		if !strings.Contains(sc.src, "local function read_clock(") {
			t.Errorf("%s: core.lua missing", d.name)
		}
	}
	slices.Sort(files)
	slices.Sort(registered)
	if !slices.Equal(files, registered) {
		t.Errorf("scripts on disk %v, registered %v", files, registered)
	}
}

// TestResultCodes: every code a script returns is a sentinel's code.
func TestResultCodes(t *testing.T) {
	code := regexp.MustCompile(`error_reply\('([A-Z]+) |code = '([A-Z]+)'`)
	n := 0
	for _, d := range scriptDefs {
		for _, m := range code.FindAllStringSubmatch(scripts[d.name].src, -1) {
			c := m[1] + m[2]
			n++
			if engine.ErrorForCode(c) == nil {
				t.Errorf("%s returns code %s, which engine.Errors does not have", d.name, c)
			}
		}
	}
	if n < 5 {
		t.Errorf("found only %d result codes", n)
	}
}

// TestScriptsCompile loads every script into the server.
func TestScriptsCompile(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	if err := e.store.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, d := range scriptDefs {
		ok, err := e.rdb.ScriptExists(context.Background(), scripts[d.name].rs.Hash()).Result()
		if err != nil || !ok[0] {
			t.Errorf("%s not loaded: %v", d.name, err)
		}
	}
}

// TestLuaConstantsMatchEngine: the constants and reason texts written in
// Lua are the engine's.
func TestLuaConstantsMatchEngine(t *testing.T) {
	all := ""
	for _, d := range scriptDefs {
		all += scripts[d.name].src
	}
	for _, want := range []string{
		"local SWEEP_PER_CLAIM = " + strconv.Itoa(engine.SweepPerClaim) + "\n",
		"(a.pr + " + strconv.Itoa(-engine.MinPriority) + ") * PRIO_UNIT",
		"'" + engine.ReasonTextWorkflowCancelled + "'",
		"'" + engine.ReasonTextFailFast + "'",
		"'" + engine.ReasonTextJobCancelled + "'",
		"'" + engine.ReasonTextPurged + "'",
		"'" + engine.ReasonTextLeaseExpired + "'",
		"'dependency ' .. spec(w, k).name .. ' ' .. ts",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the scripts do not contain %q", want)
		}
	}
	if got := engine.DependencyReason("x", engine.Failed); got != "dependency x failed" {
		t.Errorf("engine.DependencyReason changed: %q", got)
	}
	if (engine.MaxPriority-engine.MinPriority+1)*(1<<40) >= 1<<53 {
		t.Error("ready scores would not stay exact integers")
	}
}
