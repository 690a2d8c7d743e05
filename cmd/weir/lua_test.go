package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/clitest"
	"github.com/weirflow/weir/redisstore"
)

// weir lua prints the library the store loads, weir lua NAME a
// transition's script, --list the library's name and the scripts' SHA-1s;
// a name that is no transition is a usage error that lists them.
func TestLuaCommand(t *testing.T) {
	lua := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(t.Context(), append([]string{"lua"}, args...), &out, &errb)
		return code, out.String(), errb.String()
	}
	name, lib := redisstore.LuaLibrary()
	if code, out, errs := lua(); code != exitOK || out != lib || !strings.HasPrefix(out, "#!lua name="+name+"\n") {
		t.Errorf("weir lua: %d, %d bytes (want the library, %d bytes), %q", code, len(out), len(lib), errs)
	}
	src, sha, ok := redisstore.LuaScript("claim")
	if !ok || !strings.HasPrefix(src, "-- weir3_claim: ") {
		t.Fatalf("LuaScript(claim): %v %.40q", ok, src)
	}
	if code, out, errs := lua("claim"); code != exitOK || out != src {
		t.Errorf("weir lua claim: %d, %d bytes (want the script, %d bytes), %q", code, len(out), len(src), errs)
	}
	code, out, _ := lua("--list")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != exitOK || len(lines) != 1+len(redisstore.LuaScripts()) || lines[0] != "library "+name {
		t.Fatalf("weir lua --list: %d\n%s", code, out)
	}
	if !strings.Contains(out, "\nclaim ") || !strings.Contains(out, " "+sha+"\n") {
		t.Errorf("weir lua --list does not give claim's SHA-1 %s:\n%s", sha, out)
	}
	// --list --json: the same, as one JSON object.
	code, out, _ = lua("--list", "--json")
	l := clitest.Strict[luaList](t, []byte(out))
	if code != exitOK || l.Library != name || len(l.Scripts) != len(redisstore.LuaScripts()) || !slices.Contains(l.Scripts, luaScript{"claim", sha}) {
		t.Errorf("weir lua --list --json: %d %+v", code, l)
	}
	if code, _, errs := lua("--json"); code != exitUsage || !strings.Contains(errs, "--json goes with --list") {
		t.Errorf("weir lua --json: %d %q", code, errs)
	}
	if code, _, errs := lua("clam"); code != exitUsage || !strings.Contains(errs, `no transition "clam"`) || !strings.Contains(errs, "claim, finish") {
		t.Errorf("weir lua clam: %d %q", code, errs)
	}
	if code, _, errs := lua("--list", "claim"); code != exitUsage || !strings.Contains(errs, "a transition name or --list") {
		t.Errorf("weir lua --list claim: %d %q", code, errs)
	}
}
