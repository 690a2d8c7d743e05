package redisstore

import (
	"strings"
	"testing"
)

// maxTopLocals bounds the locals at the top level of every script as
// EVALSHA runs it (its include files and its own file): gopher-lua, the Lua
// of miniredis (the embedded default), compiles a function of at most 200
// registers, locals and temporaries together, and a script of 180 locals
// failed to compile there ("register overflow"; Redis's Lua allows 200
// locals and 250 registers). A new helper goes into a table of its file
// (as the fast paths' go into FF, call.lua) rather than a local of its own.
const maxTopLocals = 175

// TestLuaTopLevelLocals holds every built script under maxTopLocals, so
// that two changes that each add a local do not together break every
// script on miniredis.
func TestLuaTopLevelLocals(t *testing.T) {
	most, at := 0, ""
	for _, d := range scriptDefs {
		n := topLevelLocals(luaBuilt.script(d.name))
		if n > most {
			most, at = n, d.name
		}
		if n > maxTopLocals {
			t.Errorf("script %s declares %d locals at its top level, over %d: gopher-lua (miniredis) would soon fail to compile it; put new helpers into a table of their file", d.name, n, maxTopLocals)
		}
	}
	t.Logf("most top-level locals: %d (%s), bound %d", most, at, maxTopLocals)
}

// topLevelLocals counts the names the top-level local declarations of a
// built script declare: lines that start "local " (the build keeps
// function bodies indented, and a top-level statement starts its line).
func topLevelLocals(src string) int {
	n := 0
	for line := range strings.Lines(src) {
		rest, ok := strings.CutPrefix(line, "local ")
		if !ok {
			continue
		}
		if strings.HasPrefix(rest, "function ") {
			n++
			continue
		}
		names, _, _ := strings.Cut(rest, "=")
		names, _, _ = strings.Cut(names, "--")
		for _, x := range strings.Split(names, ",") {
			if strings.TrimSpace(x) != "" {
				n++
			}
		}
	}
	return n
}
