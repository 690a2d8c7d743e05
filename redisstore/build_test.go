package redisstore

import (
	"bytes"
	flagpkg "flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flagpkg.Bool("update", false, "rewrite lua/build from redisstore/lua/scripts and redisstore/lua/include")

// The sources (redisstore/lua) and the built copies (package lua).
const (
	luaDir      = "lua"
	luaScripts  = luaDir + "/scripts"
	luaInclude  = luaDir + "/include"
	luaBuildDir = "../lua/build"
)

// buildAll returns the files of lua/build, built by buildLua from
// redisstore/lua/scripts and redisstore/lua/include: <name>.lua per transition and library.lua.
func buildAll() (map[string]string, error) {
	b, err := buildLua(os.DirFS(luaDir), scriptDefs)
	if err != nil {
		return nil, err
	}
	out := map[string]string{"library.lua": b.library}
	for name, src := range b.scripts {
		out[name+".lua"] = src
	}
	return out, nil
}

// TestBuiltIsCurrent: lua/build holds what buildAll builds from the sources
// (with -update it rewrites lua/build), so the committed files are what
// the server runs.
func TestBuiltIsCurrent(t *testing.T) {
	want, err := buildAll()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		old, _ := filepath.Glob(filepath.Join(luaBuildDir, "*.lua"))
		for _, f := range old {
			if _, ok := want[filepath.Base(f)]; !ok {
				os.Remove(f)
			}
		}
		for name, text := range want {
			if err := os.WriteFile(filepath.Join(luaBuildDir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	have, _ := filepath.Glob(filepath.Join(luaBuildDir, "*.lua"))
	if len(have) != len(want) {
		t.Errorf("lua/build has %d files, the build makes %d: run go test ./redisstore -run TestBuiltIsCurrent -update", len(have), len(want))
	}
	for name, text := range want {
		b, err := os.ReadFile(filepath.Join(luaBuildDir, name))
		if err != nil || !bytes.Equal(b, []byte(text)) {
			t.Errorf("lua/build/%s is not current: run go test ./redisstore -run TestBuiltIsCurrent -update", name)
		}
	}
}
