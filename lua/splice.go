package lua

import (
	"fmt"
	"regexp"
	"strings"
)

// chunk is one top-level statement of an include file (a local function,
// a local declaration, or the assignment of a forward-declared local), with
// the comment lines above it.
type chunk struct {
	file string
	text string
	defs []string        // the names it declares or assigns
	uses map[string]bool // the names it mentions (a superset of what it uses)
}

var (
	defFunc   = regexp.MustCompile(`^local\s+function\s+([A-Za-z_][A-Za-z0-9_]*)`)
	defLocal  = regexp.MustCompile(`^local\s+([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*)`)
	defAssign = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*=[^=]`)
)

// includeChunks cuts include/<file> into its top-level statements. The
// include files keep one layout: a statement starts at column 0 with
// "local" or "<name> =", its body is indented, and it ends before the next
// statement or comment at column 0 ("end", "}" and ")" at column 0 close
// the statement they belong to). Anything else is an error, so a change of
// layout cannot silently drop code.
func includeChunks(file string) ([]chunk, error) {
	b, err := luaFS.ReadFile("include/" + file)
	if err != nil {
		return nil, err
	}
	var out []chunk
	var pending strings.Builder // comment and blank lines before the next statement
	cur := -1
	for n, line := range strings.SplitAfter(string(b), "\n") {
		t := strings.TrimRight(line, "\r\n")
		switch {
		case t == "" || strings.HasPrefix(t, "--"):
			if cur >= 0 && t == "" {
				out[cur].text += line
				continue
			}
			cur = -1
			pending.WriteString(line)
		case t[0] == ' ' || t[0] == '\t' || t == "end" || strings.HasPrefix(t, "end)") ||
			strings.HasPrefix(t, "}") || strings.HasPrefix(t, ")"):
			if cur < 0 {
				return nil, fmt.Errorf("include %s line %d: continuation without a statement: %q", file, n+1, t)
			}
			out[cur].text += line
		default:
			var defs []string
			if m := defFunc.FindStringSubmatch(t); m != nil {
				defs = []string{m[1]}
			} else if m := defLocal.FindStringSubmatch(t); m != nil {
				for _, d := range strings.Split(m[1], ",") {
					defs = append(defs, strings.TrimSpace(d))
				}
			} else if m := defAssign.FindStringSubmatch(t); m != nil {
				defs = []string{m[1]}
			} else {
				return nil, fmt.Errorf("include %s line %d: not a top-level definition: %q", file, n+1, t)
			}
			out = append(out, chunk{file: file, text: pending.String() + line, defs: defs})
			pending.Reset()
			cur = len(out) - 1
		}
	}
	for i := range out {
		out[i].uses = luaNames(out[i].text)
	}
	return out, nil
}

// needed returns, in order, the chunks that define a name of roots or of
// the chunks so chosen. Every chunk that defines a name is taken (a
// forward declaration and its later assignment).
func needed(chunks []chunk, roots map[string]bool) []chunk {
	byName := map[string][]int{}
	for i, c := range chunks {
		for _, d := range c.defs {
			byName[d] = append(byName[d], i)
		}
	}
	take := make([]bool, len(chunks))
	var stack []string
	seen := map[string]bool{}
	for n := range roots {
		stack = append(stack, n)
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		for _, i := range byName[n] {
			if take[i] {
				continue
			}
			take[i] = true
			for u := range chunks[i].uses {
				if !seen[u] {
					stack = append(stack, u)
				}
			}
		}
	}
	var out []chunk
	for i, c := range chunks {
		if take[i] {
			out = append(out, c)
		}
	}
	return out
}

// luaNames returns the names a piece of Lua mentions as variables: every
// identifier outside comments and strings, except keywords, fields (after
// a single "." or ":") and table constructor keys ("{k = v}").
func luaNames(src string) map[string]bool {
	out := map[string]bool{}
	var brackets []byte
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			if lvl, ok := longBracket(src[i+2:]); ok {
				i = skipLong(src, i+2, lvl)
				continue
			}
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			i++
			for i < len(src) && src[i] != c {
				if src[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case c == '[':
			if lvl, ok := longBracket(src[i:]); ok {
				i = skipLong(src, i, lvl)
				continue
			}
			brackets = append(brackets, c)
			i++
		case c == '{' || c == '(':
			brackets = append(brackets, c)
			i++
		case c == '}' || c == ')' || c == ']':
			if len(brackets) > 0 {
				brackets = brackets[:len(brackets)-1]
			}
			i++
		case isIdentStart(c):
			j := i
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			name := src[i:j]
			field := i > 0 && (src[i-1] == ':' || (src[i-1] == '.' && (i < 2 || src[i-2] != '.')))
			k := j
			for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
				k++
			}
			key := len(brackets) > 0 && brackets[len(brackets)-1] == '{' &&
				k < len(src) && src[k] == '=' && (k+1 >= len(src) || src[k+1] != '=')
			if !field && !key && !luaKeywords[name] {
				out[name] = true
			}
			i = j
		case c >= '0' && c <= '9':
			for i < len(src) && (isIdentChar(src[i]) || src[i] == '.') {
				i++
			}
		default:
			i++
		}
	}
	return out
}

// longBracket reports whether s starts a long bracket "[[" or "[=*[" and
// its level.
func longBracket(s string) (int, bool) {
	if len(s) < 2 || s[0] != '[' {
		return 0, false
	}
	n := 1
	for n < len(s) && s[n] == '=' {
		n++
	}
	if n < len(s) && s[n] == '[' {
		return n - 1, true
	}
	return 0, false
}

// skipLong returns the index after the long bracket that opens at src[i].
func skipLong(src string, i, lvl int) int {
	end := "]" + strings.Repeat("=", lvl) + "]"
	e := strings.Index(src[i:], end)
	if e < 0 {
		return len(src)
	}
	return i + e + len(end)
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

var luaKeywords = map[string]bool{
	"and": true, "break": true, "do": true, "else": true, "elseif": true, "end": true,
	"false": true, "for": true, "function": true, "if": true, "in": true, "local": true,
	"nil": true, "not": true, "or": true, "repeat": true, "return": true, "then": true,
	"true": true, "until": true, "while": true,
}
