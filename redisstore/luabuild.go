package redisstore

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
)

// The Lua build: from the sources (scripts/<name>.lua, one per transition,
// and include/<file>, the helpers they name with "--!include <file>") to
// what the server runs. spec/scripts.md describes it.

// builtLua is what the server runs.
type builtLua struct {
	// scripts holds, by transition name, the script EVALSHA runs: its
	// include files, each once and after the files it includes, then the
	// transition's file; of the include files' top-level definitions only
	// those the script names (luaPrune).
	scripts map[string]string
	// libName is the function library's name, weir<protocol>_<12 hex of
	// the SHA-1 of its text>, and library its text for FUNCTION LOAD
	// (starting "#!lua name=<libName>\n"): the include files once, then
	// every transition as one function.
	libName, library string
}

// builtNote ends the first line of every built script and of the library.
const builtNote = "built in memory by package redisstore from\n-- redisstore/lua/scripts and redisstore/lua/include: edit those files."

// buildLua builds every transition of defs from fsys, which holds
// scripts/ and include/: the library and every script.
func buildLua(fsys fs.FS, defs []scriptDef) (builtLua, error) {
	b, err := newLuaBuild(fsys, defs)
	if err != nil {
		return builtLua{}, err
	}
	out := builtLua{scripts: make(map[string]string, len(defs)), libName: b.libName, library: b.library}
	for _, d := range defs {
		out.scripts[d.name] = b.script(d.name)
	}
	return out, nil
}

// luaBuild is a build of the transitions: the library, built by
// newLuaBuild, and each script, built when asked for.
type luaBuild struct {
	libName, library string // as in builtLua

	mu  sync.Mutex // guards src, as script uses it
	src *luaSources
	// order holds, by transition name, its file and its include files in
	// the order its script has them
	order map[string]luaOrder
}

// luaOrder is a transition's file and its include files, in order.
type luaOrder struct {
	file     *luaFile
	includes []string
}

// newLuaBuild reads every transition of defs and the files it includes
// from fsys, which holds scripts/ and include/, and builds the library:
// what fails in the sources (a file not found, an include cycle) fails
// here.
func newLuaBuild(fsys fs.FS, defs []scriptDef) (*luaBuild, error) {
	b := &luaBuild{src: newLuaSources(fsys), order: make(map[string]luaOrder, len(defs))}
	var lib []luaPiece
	libDone := map[string]bool{}
	var libIncs []string
	for _, d := range defs {
		f, err := b.src.read("scripts/" + d.name + ".lua")
		if err != nil {
			return nil, err
		}
		order, err := b.src.includeOrder(f.includes, map[string]bool{}, nil)
		if err != nil {
			return nil, fmt.Errorf("scripts/%s.lua: %w", d.name, err)
		}
		b.order[d.name] = luaOrder{file: f, includes: order}
		if libIncs, err = b.src.includeOrder(f.includes, libDone, libIncs); err != nil {
			return nil, fmt.Errorf("scripts/%s.lua: %w", d.name, err)
		}
		var flags []string
		if d.readOnly {
			flags = append(flags, "'no-writes'")
		}
		if d.allowFull {
			flags = append(flags, "'allow-oom'")
		}
		lib = append(lib, luaPiece{text: fmt.Sprintf("\n-- ---- scripts/%s.lua\nredis.register_function{function_name = '@LIB@_%s', flags = {%s},\n  callback = function(KEYS, ARGV)\n",
			d.name, d.name, strings.Join(flags, ", "))}, luaPiece{file: f}, luaPiece{text: "end}\n"})
	}
	pieces := []luaPiece{{text: fmt.Sprintf("-- weir%d: every transition, as one function library; %s\n\nlocal IS_FUNCTION = true\n\n", ProtocolVersion, builtNote)}}
	pieces = b.src.appendIncludes(pieces, libIncs)
	text := b.src.inline(append(pieces, lib...))
	sum := sha1.Sum([]byte(text))
	b.libName = fmt.Sprintf("weir%d_%s", ProtocolVersion, hex.EncodeToString(sum[:])[:12])
	b.library = "#!lua name=" + b.libName + "\n" + strings.ReplaceAll(text, "@LIB@", b.libName)
	return b, nil
}

// script builds the script of transition name, one of newLuaBuild's defs:
// its include files and its own file, without the definitions it does not
// name (luaPrune), its top-level locals declared in the order that costs
// each call least (luaHoistLocals).
func (b *luaBuild) script(name string) string {
	src, _ := luaPrune(b.whole(name))
	return luaHoistLocals(src)
}

// whole builds the script of transition name with every definition of its
// include files, as the library has them.
func (b *luaBuild) whole(name string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	o := b.order[name]
	pieces := []luaPiece{{text: fmt.Sprintf("-- weir%d_%s: %s\n\nlocal IS_FUNCTION = false\n\n", ProtocolVersion, name, builtNote)}}
	pieces = b.src.appendIncludes(pieces, o.includes)
	pieces = append(pieces, luaPiece{text: "-- ---- scripts/" + name + ".lua\n"}, luaPiece{file: o.file})
	return b.src.inline(pieces)
}

// luaSources reads the source files, each once.
type luaSources struct {
	fsys  fs.FS
	files map[string]*luaFile // by path: scripts/<name>.lua, include/<file>
	// consts numbers the sets of string constants the chunks built so
	// far declare, by the text of their declarations in order (inline)
	consts map[string]int
}

// luaFile is a source file.
type luaFile struct {
	// text is the file's text, its last line ended by a newline (the
	// build adds one where it lacks)
	text string
	// includes are the files it names with its "--!include <file>"
	// lines, in order
	includes []string
	// consts are the string constants it declares, in order
	consts []luaConstant
	// inlined holds text with the string constants of a chunk inlined, by
	// the number of the chunk's set of constants (luaSources.consts)
	inlined map[int]string
}

// luaConstant is a string constant's declaration: "local NAME = 'value'".
type luaConstant struct{ name, value string }

// luaPiece is a part of a chunk: a source file or text the build writes
// (file nil); either is whole lines.
type luaPiece struct {
	file *luaFile
	text string
}

// newLuaSources returns the sources in fsys, which holds scripts/ and
// include/.
func newLuaSources(fsys fs.FS) *luaSources {
	return &luaSources{fsys: fsys, files: map[string]*luaFile{}, consts: map[string]int{}}
}

// read returns the file at path ("scripts/<name>.lua", "include/<file>").
func (s *luaSources) read(path string) (*luaFile, error) {
	if f, ok := s.files[path]; ok {
		return f, nil
	}
	b, err := fs.ReadFile(s.fsys, path)
	if err != nil {
		return nil, err
	}
	f := &luaFile{text: string(b), inlined: map[int]string{}}
	if !strings.HasSuffix(f.text, "\n") {
		f.text += "\n"
	}
	n := 0
	for line := range strings.Lines(f.text) {
		n++
		if rest, ok := strings.CutPrefix(line, "--!"); ok {
			name, ok := strings.CutPrefix(strings.TrimSuffix(rest, "\n"), "include ")
			if !ok || name == "" || strings.ContainsAny(name, " \t\f\r\v") {
				return nil, fmt.Errorf("%s:%d: %q is not an include line (want \"--!include <file>\", one space, no other)", path, n, strings.TrimSuffix(line, "\n"))
			}
			f.includes = append(f.includes, name)
		}
		if name, value, ok := constantDecl(line); ok {
			f.consts = append(f.consts, luaConstant{name, value})
		}
	}
	s.files[path] = f
	return f, nil
}

// appendIncludes appends to pieces the include files names (read), each
// after a line that names it and followed by an empty line.
func (s *luaSources) appendIncludes(pieces []luaPiece, names []string) []luaPiece {
	for _, n := range names {
		pieces = append(pieces, luaPiece{text: "-- ---- include/" + n + "\n"}, luaPiece{file: s.files["include/"+n]}, luaPiece{text: "\n"})
	}
	return pieces
}

// includeOrder appends to out roots' include files and theirs that done
// does not hold, each once, every file after the files it includes, and
// marks them done.
func (s *luaSources) includeOrder(roots []string, done map[string]bool, out []string) ([]string, error) {
	var visit func(name string, path []string) error
	visit = func(name string, path []string) error {
		if done[name] {
			return nil
		}
		if slices.Contains(path, name) {
			return fmt.Errorf("include cycle: %s", strings.Join(append(path, name), " -> "))
		}
		f, err := s.read("include/" + name)
		if err != nil {
			if len(path) > 0 {
				return fmt.Errorf("include/%s, included by include/%s: %w", name, path[len(path)-1], err)
			}
			return err
		}
		for _, inc := range f.includes {
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

// inline returns the chunk of pieces with its string constants written as
// the literals they stand for where they are used, and their declarations
// dropped: a chunk's top-level locals each take one of a Lua function's
// 200 registers, and miniredis's gopher-lua refuses a chunk that needs
// more. A chunk's constants are those its pieces declare (of a name
// declared twice, the last); a use is a whole word (letters, digits,
// underscores) before its line's first "--". A file is inlined once per
// set of constants.
func (s *luaSources) inline(pieces []luaPiece) string {
	values := map[string]string{}
	var key strings.Builder
	for _, p := range pieces {
		consts := p.file.constsOr(p.text)
		for _, c := range consts {
			values[c.name] = c.value
			key.WriteString(c.name + "=" + c.value + "\n")
		}
	}
	id, ok := s.consts[key.String()]
	if !ok {
		id = len(s.consts)
		s.consts[key.String()] = id
	}
	var out strings.Builder
	n := 0
	texts := make([]string, len(pieces))
	for i, p := range pieces {
		if p.file == nil {
			texts[i] = inlineConstants(p.text, values)
		} else if t, ok := p.file.inlined[id]; ok {
			texts[i] = t
		} else {
			texts[i] = inlineConstants(p.file.text, values)
			p.file.inlined[id] = texts[i]
		}
		n += len(texts[i])
	}
	out.Grow(n)
	for _, t := range texts {
		out.WriteString(t)
	}
	return out.String()
}

// constsOr returns the constants f declares, or when f is nil those text
// declares.
func (f *luaFile) constsOr(text string) []luaConstant {
	if f != nil {
		return f.consts
	}
	var out []luaConstant
	for line := range strings.Lines(text) {
		if name, value, ok := constantDecl(line); ok {
			out = append(out, luaConstant{name, value})
		}
	}
	return out
}

// constantDecl returns the name and the value of line when it declares a
// constant: a whole line, newline included, "local NAME = 'value'..." (a
// string, its value quoted: fields.lua) or "local NAME = 123" followed by
// nothing but a comment (a whole number, its digits: call.lua), NAME of
// capitals, digits and underscores, starting with a capital. Inlined, a
// constant takes no register of the script's top level (TestLuaTopLevelLocals).
func constantDecl(line string) (name, value string, ok bool) {
	rest, ok := strings.CutPrefix(line, "local ")
	if !ok || !strings.HasSuffix(line, "\n") || rest == "" || rest[0] < 'A' || rest[0] > 'Z' {
		return "", "", false
	}
	n := 1
	for n < len(rest) && (rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] >= '0' && rest[n] <= '9' || rest[n] == '_') {
		n++
	}
	name, rest = rest[:n], rest[n:]
	if rest, ok = strings.CutPrefix(rest, " = "); !ok {
		return "", "", false
	}
	if digits := len(rest) - len(strings.TrimLeft(rest, "0123456789")); digits > 0 {
		// a whole number: its digits, then the end of the statement
		if after := rest[digits:]; after[0] == '\n' || after[0] == ' ' && strings.HasPrefix(strings.TrimLeft(after, " "), "--") || after[0] == ' ' && strings.TrimLeft(after, " ") == "\n" {
			return name, rest[:digits], true
		}
		return "", "", false
	}
	if rest, ok = strings.CutPrefix(rest, "'"); !ok {
		return "", "", false
	}
	end := strings.IndexByte(rest, '\'')
	if end < 0 {
		return "", "", false
	}
	return name, "'" + rest[:end+1], true
}

// isWord reports whether c is a letter, a digit or an underscore.
func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// inlineConstants returns src (whole lines) without its constants'
// declarations and with values' names, where they are used, replaced by
// their values (luaSources.inline).
func inlineConstants(src string, values map[string]string) string {
	if len(values) == 0 {
		return src
	}
	var b strings.Builder
	b.Grow(len(src))
	for line := range strings.Lines(src) {
		if _, _, ok := constantDecl(line); ok {
			continue
		}
		code := line
		if c := strings.Index(line, "--"); c >= 0 {
			code = line[:c]
		}
		done := 0 // line[:done] is written
		for i := 0; i < len(code); {
			if !isWord(code[i]) {
				i++
				continue
			}
			j := i + 1
			for j < len(code) && isWord(code[j]) {
				j++
			}
			if code[i] >= 'A' && code[i] <= 'Z' {
				if v, ok := values[code[i:j]]; ok {
					b.WriteString(line[done:i])
					b.WriteString(v)
					done = j
				}
			}
			i = j
		}
		b.WriteString(line[done:])
	}
	return b.String()
}
