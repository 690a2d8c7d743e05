package redisstore

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/weirflow/weir/lua"
)

// builtFS is what the server runs (package lua): one script per transition
// (build/<name>.lua, for EVALSHA) and one function library with all of
// them (build/library.lua, for FUNCTION LOAD and FCALL), built from
// lua/scripts and lua/include by build_test.go.
var builtFS = lua.Built

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
	{name: "schedule_put"},
	{name: "schedule_delete", allowFull: true},
	{name: "schedule_pause", allowFull: true},
	{name: "schedule_fire"},
	{name: "schedule_list", readOnly: true},
	{name: "progress"},
	{name: "limit_keys", allowFull: true},
	{name: "signal", allowFull: true},
}

// script is one transition as the server runs it.
type script struct {
	def scriptDef
	src string // build/<name>.lua
	sha string // SHA1 of src, lower case
	fn  string // its function in the library: <library>_<name>
	// the command names of each path, boxed once
	fcall, evalsha, eval any
}

// library is build/library.lua: its name (weir<protocol>_<hash of its
// source>) and its source.
var library struct{ name, src string }

// scripts holds every transition, by name.
var scripts = mustLoadScripts()

func mustLoadScripts() map[string]*script {
	b, err := builtFS.ReadFile("build/library.lua")
	if err != nil {
		panic(err)
	}
	library.src = string(b)
	first, _, _ := strings.Cut(library.src, "\n")
	name, ok := strings.CutPrefix(first, "#!lua name=")
	if !ok || !strings.HasPrefix(name, fmt.Sprintf("weir%d_", ProtocolVersion)) {
		panic(fmt.Sprintf("lua: build/library.lua starts with %q", first))
	}
	library.name = name
	out := make(map[string]*script, len(scriptDefs))
	for _, d := range scriptDefs {
		src, err := builtFS.ReadFile("build/" + d.name + ".lua")
		if err != nil {
			panic(err)
		}
		sum := sha1.Sum(src)
		sc := &script{def: d, src: string(src), sha: hex.EncodeToString(sum[:]), fn: library.name + "_" + d.name,
			fcall: "fcall", evalsha: "evalsha", eval: "eval"}
		if d.readOnly {
			// EVALSHA_RO would do for Redis, but miniredis refuses TIME in it
			sc.fcall = "fcall_ro"
		}
		out[d.name] = sc
	}
	return out
}
