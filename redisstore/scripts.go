package redisstore

import (
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"io/fs"
	"sync"
)

// luaFS holds the transitions' Lua as written (spec/scripts.md):
// lua/scripts/<name>.lua, one file per transition, and lua/include/<file>,
// the helpers they name with --!include. What the server runs is built
// from them in memory (luabuild.go).
//
//go:embed lua/scripts/*.lua lua/include/*.lua
var luaFS embed.FS

// luaBuilt is the build of luaFS: the function library, built when the
// package initializes, and each script, built on its first use
// (script.text).
var luaBuilt = mustBuildLua()

// mustBuildLua builds the library from luaFS. The sources are compiled in,
// so the build fails the same way on every start: a source that is not
// there, a malformed include line or an include cycle panics here, naming
// the files, as soon as a test binary of the package starts, and never
// reaches a user.
func mustBuildLua() *luaBuild {
	src, err := fs.Sub(luaFS, "lua")
	if err == nil {
		var b *luaBuild
		if b, err = newLuaBuild(src, scriptDefs); err == nil {
			return b
		}
	}
	panic("redisstore: building the Lua from redisstore/lua: " + err.Error())
}

// scriptDef registers one transition.
type scriptDef struct {
	name string // file name under scripts/, without ".lua"
	// readOnly scripts write nothing (FCALL_RO and the function flag
	// no-writes; replicas can serve them).
	readOnly bool
	// allowFull scripts run on a server above its maxmemory (the function
	// flag allow-oom; as scripts, allow_full in call.lua): the transitions
	// that end, keep or hand out work already stored.
	allowFull bool
}

// scriptDefs lists every transition.
var scriptDefs = []scriptDef{
	{name: "submit"},
	{name: "enqueue"},
	{name: "claim", allowFull: true},
	{name: "finish", allowFull: true},
	{name: "heartbeat", allowFull: true},
	{name: "expire", allowFull: true},
	{name: "cancel_workflow", allowFull: true},
	{name: "cancel_job", allowFull: true},
	{name: "pause", allowFull: true},
	{name: "limit_queue", allowFull: true},
	{name: "rate_limit_queue", allowFull: true},
	{name: "purge", allowFull: true},
	{name: "retry_job"},
	{name: "rerun_workflow"},
	{name: "delete_job", allowFull: true},
	{name: "delete_workflow", allowFull: true},
	{name: "drain", allowFull: true},
	{name: "get_workflow", readOnly: true},
	{name: "get_job", readOnly: true},
	{name: "list", readOnly: true},
	{name: "list_jobs", readOnly: true},
	{name: "queues", readOnly: true},
	{name: "observe", readOnly: true},
	{name: "stats", readOnly: true},
	{name: "schedule_put"},
	{name: "schedule_delete", allowFull: true},
	{name: "schedule_pause", allowFull: true},
	{name: "schedule_fire"},
	{name: "schedule_list", readOnly: true},
	{name: "worker_beat", allowFull: true},
	{name: "worker_remove", allowFull: true},
	{name: "workers", readOnly: true},
	{name: "progress"},
	{name: "limit_keys", allowFull: true},
	{name: "signal", allowFull: true},
	// weir migrate's step (migrate.go): it moves stored work, so a full
	// server lets it run
	{name: "migrate", allowFull: true},
}

// script is one transition as the server runs it.
type script struct {
	def scriptDef
	fn  string // its function in the library: <library>_<name>
	// the command names of each path, boxed once
	fcall, evalsha, eval any

	once  sync.Once
	built scriptText // by text
}

// scriptText is a transition's script for EVAL and EVALSHA.
type scriptText struct {
	src string
	sha string // SHA-1 of src, lower case
}

// text returns sc's script, built on its first use: a store on the
// functions path never builds one.
func (sc *script) text() scriptText {
	sc.once.Do(func() {
		src := luaBuilt.script(sc.def.name)
		sum := sha1.Sum([]byte(src))
		sc.built = scriptText{src: src, sha: hex.EncodeToString(sum[:])}
	})
	return sc.built
}

// library is the function library: its name (weir<protocol>_<hash of its
// text>) and its text, for FUNCTION LOAD.
var library = struct{ name, src string }{luaBuilt.libName, luaBuilt.library}

// scripts holds every transition, by name.
var scripts = makeScripts()

func makeScripts() map[string]*script {
	out := make(map[string]*script, len(scriptDefs))
	for _, d := range scriptDefs {
		sc := &script{def: d, fn: library.name + "_" + d.name, fcall: "fcall", evalsha: "evalsha", eval: "eval"}
		if d.readOnly {
			// EVALSHA_RO would do for Redis, but miniredis refuses TIME in it
			sc.fcall = "fcall_ro"
		}
		out[d.name] = sc
	}
	return out
}

// LuaLibrary returns the function library the store loads with FUNCTION
// LOAD and calls with FCALL: its name, weir<ProtocolVersion>_<12 hex of
// the SHA-1 of its text>, and its text, as built from the package's Lua
// sources (spec/scripts.md). `weir lua` prints it.
func LuaLibrary() (name, src string) { return library.name, library.src }

// LuaScript returns the script transition name runs as on the scripts path
// (EVALSHA, EVAL) and its SHA-1 in lower-case hex; ok is false when no
// transition has that name (LuaScripts lists them). `weir lua NAME`
// prints it.
func LuaScript(name string) (src, sha string, ok bool) {
	sc, ok := scripts[name]
	if !ok {
		return "", "", false
	}
	t := sc.text()
	return t.src, t.sha, true
}

// LuaScripts returns the names of the transitions, in the library's order.
func LuaScripts() []string {
	out := make([]string, len(scriptDefs))
	for i, d := range scriptDefs {
		out[i] = d.name
	}
	return out
}
