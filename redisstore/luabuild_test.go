package redisstore

import (
	"crypto/sha1"
	"encoding/hex"
	"io/fs"
	"os"
	"testing"
	"testing/fstest"

	"github.com/weirflow/weir/lua"
)

// luaSourceFS holds the sources: scripts/ and include/.
var luaSourceFS = os.DirFS(luaDir)

// TestLuaBuildMatchesCommitted: buildLua, run on redisstore/lua/scripts
// and redisstore/lua/include, makes byte for byte what lua/build holds
// (the committed build the store runs): every script with the same SHA-1,
// the library with the same name and text, and no file more or less.
func TestLuaBuildMatchesCommitted(t *testing.T) {
	b, err := buildLua(luaSourceFS, scriptDefs)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := fs.Glob(lua.Built, "build/*.lua")
	if err != nil {
		t.Fatal(err)
	}
	if len(committed) != len(b.scripts)+1 {
		t.Errorf("lua/build has %d files, the in-memory build %d scripts and a library", len(committed), len(b.scripts))
	}
	sha := func(s string) string { sum := sha1.Sum([]byte(s)); return hex.EncodeToString(sum[:]) }
	same := 0
	for _, d := range scriptDefs {
		want, err := lua.Built.ReadFile("build/" + d.name + ".lua")
		if err != nil {
			t.Fatal(err)
		}
		got := b.scripts[d.name]
		if got != string(want) || sha(got) != scripts[d.name].sha {
			t.Errorf("%s: in memory %d bytes, SHA-1 %s; committed %d bytes, SHA-1 %s", d.name, len(got), sha(got), len(want), scripts[d.name].sha)
			continue
		}
		same++
		t.Logf("%-16s %7d bytes  %s  same", d.name, len(got), sha(got))
	}
	want, err := lua.Built.ReadFile("build/library.lua")
	if err != nil {
		t.Fatal(err)
	}
	if b.libName != library.name || b.library != string(want) || b.library != library.src {
		t.Errorf("library: in memory %s, %d bytes, SHA-1 %s; committed %s, %d bytes, SHA-1 %s",
			b.libName, len(b.library), sha(b.library), library.name, len(want), sha(string(want)))
	} else {
		same++
		t.Logf("%-16s %7d bytes  %s  same (library %s)", "library", len(b.library), sha(b.library), b.libName)
	}
	t.Logf("%d of %d committed files are byte-identical to the in-memory build", same, len(committed))
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
