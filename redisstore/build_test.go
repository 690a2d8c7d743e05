package redisstore

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	flagpkg "flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flagpkg.Bool("update", false, "rewrite lua/build from lua/scripts and lua/include")

// The sources and the built copies, in package lua.
const (
	luaScripts = "../lua/scripts"
	luaInclude = "../lua/include"
	luaBuild   = "../lua/build"
)

// includeLine is a file's declaration of a helper file it uses.
var includeLine = regexp.MustCompile(`(?m)^--!include (\S+)$`)

// luaFile reads dir/name and returns its text and the include files it
// names, in order.
func luaFile(dir, name string) (string, []string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "", nil, err
	}
	var incs []string
	for _, m := range includeLine.FindAllStringSubmatch(string(b), -1) {
		incs = append(incs, m[1])
	}
	return string(b), incs, nil
}

// includeOrder returns roots' include files and theirs, each once, every
// file after the files it includes.
func includeOrder(roots []string, done map[string]bool, out []string) ([]string, error) {
	var visit func(name string, path []string) error
	visit = func(name string, path []string) error {
		if done[name] {
			return nil
		}
		if slices.Contains(path, name) {
			return fmt.Errorf("include cycle: %s", strings.Join(append(path, name), " -> "))
		}
		_, incs, err := luaFile(luaInclude, name)
		if err != nil {
			return err
		}
		for _, inc := range incs {
			if err := visit(inc, append(path, name)); err != nil {
				return err
			}
		}
		done[name] = true
		out = append(out, name)
		return nil
	}
	for _, r := range roots {
		if err := visit(r, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

const builtNote = "built from lua/scripts and lua/include by `go test ./redisstore -run TestBuiltIsCurrent -update`:\n-- edit those files, not this one."

// buildAll returns the files of lua/build: one script per transition, as
// EVALSHA runs it (its include files first, each once, then the script),
// and library.lua, every transition as one function of a library whose
// name carries a hash of its text.
func buildAll() (map[string]string, error) {
	out := map[string]string{}
	includeText := func(name string) (string, error) {
		t, _, err := luaFile(luaInclude, name)
		return "-- ---- include/" + name + "\n" + t, err
	}
	libDone := map[string]bool{}
	var libIncs []string
	var fns strings.Builder
	for _, d := range scriptDefs {
		body, incs, err := luaFile(luaScripts, d.name+".lua")
		if err != nil {
			return nil, err
		}
		order, err := includeOrder(incs, map[string]bool{}, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.name, err)
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "-- weir%d_%s: %s\n\nlocal IS_FUNCTION = false\n\n", ProtocolVersion, d.name, builtNote)
		for _, inc := range order {
			t, err := includeText(inc)
			if err != nil {
				return nil, err
			}
			sb.WriteString(t + "\n")
		}
		sb.WriteString("-- ---- scripts/" + d.name + ".lua\n" + body)
		out[d.name+".lua"] = inlineConstants(sb.String())

		if libIncs, err = includeOrder(incs, libDone, libIncs); err != nil {
			return nil, err
		}
		var flags []string
		if d.readOnly {
			flags = append(flags, "'no-writes'")
		}
		if d.allowFull {
			flags = append(flags, "'allow-oom'")
		}
		fmt.Fprintf(&fns, "\n-- ---- scripts/%s.lua\nredis.register_function{function_name = '@LIB@_%s', flags = {%s},\n  callback = function(KEYS, ARGV)\n%send}\n",
			d.name, d.name, strings.Join(flags, ", "), body)
	}
	var lib strings.Builder
	fmt.Fprintf(&lib, "-- weir%d: every transition, as one function library; %s\n\nlocal IS_FUNCTION = true\n\n", ProtocolVersion, builtNote)
	for _, inc := range libIncs {
		t, err := includeText(inc)
		if err != nil {
			return nil, err
		}
		lib.WriteString(t + "\n")
	}
	lib.WriteString(fns.String())
	src := inlineConstants(lib.String())
	sum := sha1.Sum([]byte(src))
	name := fmt.Sprintf("weir%d_%s", ProtocolVersion, hex.EncodeToString(sum[:])[:12])
	out["library.lua"] = "#!lua name=" + name + "\n" + strings.ReplaceAll(src, "@LIB@", name)
	return out, nil
}

// constantLine is the declaration of a string constant (fields.lua).
var constantLine = regexp.MustCompile(`(?m)^local ([A-Z][A-Z0-9_]*) = ('[^']*').*\n`)

// inlineConstants writes a script's string constants as literals where
// they are used, outside comments, and drops their declarations: a script
// is one chunk, each of its top-level locals takes one of a Lua function's
// 200 registers, and miniredis's gopher-lua refuses a chunk that needs
// more. The library, one chunk for every transition, is built the same
// way.
func inlineConstants(src string) string {
	values := map[string]string{}
	for _, m := range constantLine.FindAllStringSubmatch(src, -1) {
		values[m[1]] = m[2]
	}
	if len(values) == 0 {
		return src
	}
	src = constantLine.ReplaceAllString(src, "")
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) })
	use := regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
	lines := strings.Split(src, "\n")
	for i, line := range lines {
		code, comment := line, ""
		if c := strings.Index(line, "--"); c >= 0 {
			code, comment = line[:c], line[c:]
		}
		lines[i] = use.ReplaceAllStringFunc(code, func(n string) string { return values[n] }) + comment
	}
	return strings.Join(lines, "\n")
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
		old, _ := filepath.Glob(filepath.Join(luaBuild, "*.lua"))
		for _, f := range old {
			if _, ok := want[filepath.Base(f)]; !ok {
				os.Remove(f)
			}
		}
		for name, text := range want {
			if err := os.WriteFile(filepath.Join(luaBuild, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	have, _ := filepath.Glob(filepath.Join(luaBuild, "*.lua"))
	if len(have) != len(want) {
		t.Errorf("lua/build has %d files, the build makes %d: run go test ./redisstore -run TestBuiltIsCurrent -update", len(have), len(want))
	}
	for name, text := range want {
		b, err := os.ReadFile(filepath.Join(luaBuild, name))
		if err != nil || !bytes.Equal(b, []byte(text)) {
			t.Errorf("lua/build/%s is not current: run go test ./redisstore -run TestBuiltIsCurrent -update", name)
		}
	}
}
