package lua

import (
	"embed"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed scripts/*.lua include/*.lua
var luaFS embed.FS

// scriptDef registers one transition's script.
type scriptDef struct {
	name string // file name under scripts/, without ".lua"
	// keys is how many KEYS the Go caller passes; a test checks it
	// against the script's header.
	keys int
	// readOnly scripts write nothing but the clock.
	readOnly bool
}

// scriptDefs is the table of every script. Each one gets the partition's
// common keys (keys.common).
var scriptDefs = []scriptDef{
	{name: "submit", keys: 5},
	{name: "enqueue", keys: 5},
	{name: "claim", keys: 5},
	{name: "finish", keys: 5},
	{name: "heartbeat", keys: 5},
	{name: "expire", keys: 5},
	{name: "cancel_workflow", keys: 5},
	{name: "cancel_job", keys: 5},
	{name: "pause", keys: 5},
	{name: "purge", keys: 5},
	{name: "get_workflow", keys: 5, readOnly: true},
	{name: "get_job", keys: 5, readOnly: true},
	{name: "list", keys: 5, readOnly: true},
	{name: "queues", keys: 5, readOnly: true},
	{name: "observe", keys: 5, readOnly: true},
}

// script is a loaded script: its versioned name, its spliced source and
// the go-redis Script that runs it (EVALSHA, EVAL on NOSCRIPT).
type script struct {
	def  scriptDef
	name string // weir1_<name>
	src  string
	rs   *redis.Script
}

// scripts holds every script, by file name; built once at init from the
// table above.
var scripts = mustLoadScripts()

func mustLoadScripts() map[string]*script {
	out := make(map[string]*script, len(scriptDefs))
	for _, d := range scriptDefs {
		src, err := buildScript(d.name)
		if err != nil {
			panic(err)
		}
		out[d.name] = &script{
			def: d, name: fmt.Sprintf("weir%d_%s", ProtocolVersion, d.name),
			src: src, rs: redis.NewScript(src),
		}
	}
	return out
}

// buildScript reads scripts/<name>.lua and replaces its "--!include f"
// lines (one level: includes do not include) with the top-level
// definitions of those files that the script uses, directly or through
// other definitions, in the files' order (see splice.go). Unused helpers
// are left out: Redis runs a cached script's whole body on every call, so
// each definition spliced costs CPU on every call.
func buildScript(name string) (string, error) {
	b, err := luaFS.ReadFile("scripts/" + name + ".lua")
	if err != nil {
		return "", fmt.Errorf("lua: script %s: %w", name, err)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "-- weir%d_%s\n", ProtocolVersion, name)
	var body strings.Builder
	var incs []string
	at := -1 // where the spliced definitions go: the first include line
	for _, line := range strings.SplitAfter(string(b), "\n") {
		inc, ok := strings.CutPrefix(strings.TrimSpace(line), "--!include ")
		if !ok {
			body.WriteString(line)
			continue
		}
		if at < 0 {
			at = body.Len()
		}
		incs = append(incs, strings.TrimSpace(inc))
	}
	src := body.String()
	if at < 0 {
		out.WriteString(src)
		return out.String(), nil
	}
	var chunks []chunk
	for _, inc := range incs {
		cs, err := includeChunks(inc)
		if err != nil {
			return "", fmt.Errorf("lua: script %s: %w", name, err)
		}
		chunks = append(chunks, cs...)
	}
	out.WriteString(src[:at])
	for _, c := range needed(chunks, luaNames(src)) {
		out.WriteString(c.text)
	}
	out.WriteString(src[at:])
	return out.String(), nil
}
