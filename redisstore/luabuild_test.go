package redisstore

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

// The sources, as files (the tests that read them; the store embeds them).
const (
	luaDir     = "lua"
	luaScripts = luaDir + "/scripts"
	luaInclude = luaDir + "/include"
)

// luaSourceFS holds the sources: scripts/ and include/.
var luaSourceFS = os.DirFS(luaDir)

// TestLuaSources: the sources build, and every include file is included
// by a transition (TestScriptHeaders: every script file is one); what the
// store runs is that build, each script built on first use from several
// goroutines at once.
func TestLuaSources(t *testing.T) {
	b, err := buildLua(luaSourceFS, scriptDefs)
	if err != nil {
		t.Fatal(err)
	}
	if b.libName != library.name || b.library != library.src {
		t.Errorf("the library built from %s is not the one the store loads", luaDir)
	}
	files, err := fs.Glob(luaSourceFS, "include/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, f := range files {
		name := strings.TrimPrefix(f, "include/")
		if !strings.Contains(b.library, "\n-- ---- include/"+name+"\n") {
			t.Errorf("%s/%s is included by no transition: include it or delete it", luaDir, f)
		}
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for _, d := range scriptDefs {
				if got := scripts[d.name].text().src; got != b.scripts[d.name] {
					t.Errorf("%s: the script the store runs is not the one built from %s", d.name, luaDir)
				}
			}
		})
	}
	wg.Wait()
}

// TestLuaBuildErrors: a script or an include file that is not there, a
// malformed include line and an include cycle fail the build with an error
// that names the files.
func TestLuaBuildErrors(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	defs := []scriptDef{{name: "a"}}
	for _, tc := range []struct {
		name string
		src  fstest.MapFS
		want string
	}{
		{"no script", fstest.MapFS{}, "scripts/a.lua"},
		{"no include", fstest.MapFS{"scripts/a.lua": file("--!include x.lua\n")}, "scripts/a.lua: open include/x.lua"},
		{"nested", fstest.MapFS{"scripts/a.lua": file("--!include x.lua\n"), "include/x.lua": file("--!include y.lua\n")},
			"scripts/a.lua: include/y.lua, included by include/x.lua"},
		{"bad include line", fstest.MapFS{"scripts/a.lua": file("-- a\n--!include  x.lua\n")},
			`scripts/a.lua:2: "--!include  x.lua" is not an include line`},
		{"cycle", fstest.MapFS{"scripts/a.lua": file("--!include x.lua\n"), "include/x.lua": file("--!include y.lua\n"),
			"include/y.lua": file("--!include x.lua\n")}, "scripts/a.lua: include cycle: x.lua -> y.lua -> x.lua"},
	} {
		_, err := buildLua(tc.src, defs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
		if (tc.name == "no script" || tc.name == "no include" || tc.name == "nested") && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v is not fs.ErrNotExist", tc.name, err)
		}
	}
}

// TestLuaInlinesConstants: a chunk's string and whole-number constants
// are written where they are used, outside comments and as whole words
// only, and their declarations dropped; an expression is no constant.
func TestLuaInlinesConstants(t *testing.T) {
	src := fstest.MapFS{
		"include/k.lua": &fstest.MapFile{Data: []byte("local F_A = 'a' -- the a field\nlocal NOT_CONST = 1 + N\nlocal N = 64 -- a number\n")},
		"scripts/s.lua": &fstest.MapFile{Data: []byte("--!include k.lua\nx(F_A, XF_A, F_AB, N) -- F_A\nlocal F_B = 'b'\ny(F_B)")},
	}
	b, err := newLuaBuild(src, []scriptDef{{name: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	got := b.whole("s") // before pruning (TestLuaPruneKeepsWhatIsNamed)
	_, body, _ := strings.Cut(got, "-- ---- include/k.lua\n")
	want := "local NOT_CONST = 1 + 64\n\n-- ---- scripts/s.lua\n--!include k.lua\nx('a', XF_A, F_AB, 64) -- F_A\ny('b')\n"
	if body != want {
		t.Errorf("built\n%s\nwant\n%s", body, want)
	}
	if !slices.ContainsFunc(strings.Split(b.library, "\n"), func(l string) bool { return l == "x('a', XF_A, F_AB, 64) -- F_A" }) {
		t.Errorf("the library does not inline F_A:\n%s", b.library)
	}
}

// luaSourcesInMemory returns a copy of luaSourceFS in memory, as the
// embedded sources are.
func luaSourcesInMemory(b *testing.B) fs.FS {
	src := fstest.MapFS{}
	for _, pattern := range []string{"scripts/*.lua", "include/*.lua"} {
		names, err := fs.Glob(luaSourceFS, pattern)
		if err != nil || len(names) == 0 {
			b.Fatal(pattern, names, err)
		}
		for _, n := range names {
			data, err := fs.ReadFile(luaSourceFS, n)
			if err != nil {
				b.Fatal(err)
			}
			src[n] = &fstest.MapFile{Data: data}
		}
	}
	return src
}

// BenchmarkBuildLua: what building the library and every script costs.
func BenchmarkBuildLua(b *testing.B) {
	src := luaSourcesInMemory(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buildLua(src, scriptDefs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildLuaLibrary: what building the library costs (newLuaBuild
// reads every source and resolves every include on the way).
func BenchmarkBuildLuaLibrary(b *testing.B) {
	src := luaSourcesInMemory(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := newLuaBuild(src, scriptDefs); err != nil {
			b.Fatal(err)
		}
	}
}
