package redisstore

import (
	"slices"
	"strings"
)

// Pruning a script: EVALSHA runs the whole text of a script on every call,
// so each top-level definition it carries (a function made, a table
// filled) costs every call whether the call uses it or not. A script
// keeps a definition only where its own code, or a definition it keeps,
// names it; the function library, whose top level runs once at load,
// keeps everything. spec/scripts.md ("How a script is built") describes
// the rules.

// luaToken is a token of Lua source: a name or keyword, a number, a
// string, or punctuation; comments are not tokens.
type luaToken struct {
	kind byte   // 'n' name or keyword, '0' number, 's' string, 'p' punctuation
	text string // a string's text with its quotes
	line int    // 0-based line of its first character
}

// luaKeywords are Lua 5.1's reserved words.
var luaKeywords = map[string]bool{
	"and": true, "break": true, "do": true, "else": true, "elseif": true, "end": true,
	"false": true, "for": true, "function": true, "if": true, "in": true, "local": true,
	"nil": true, "not": true, "or": true, "repeat": true, "return": true, "then": true,
	"true": true, "until": true, "while": true,
}

// luaLongBracket returns the level of the long bracket that opens src at
// i ("[[" 0, "[=[" 1, ...), or -1.
func luaLongBracket(src string, i int) int {
	if i >= len(src) || src[i] != '[' {
		return -1
	}
	j := i + 1
	for j < len(src) && src[j] == '=' {
		j++
	}
	if j < len(src) && src[j] == '[' {
		return j - i - 1
	}
	return -1
}

// luaTokens splits src into tokens. It is lenient: what it does not know
// it takes as one character of punctuation (the server's compiler judges
// the text; pruning only needs names, brackets and blocks).
func luaTokens(src string) []luaToken {
	var out []luaToken
	line := 0
	i := 0
	// skip advances i to j, counting newlines
	skip := func(j int) {
		if j > len(src) {
			j = len(src)
		}
		line += strings.Count(src[i:j], "\n")
		i = j
	}
	// longEnd returns the index after the long bracket of level lvl that
	// closes what opens at from
	longEnd := func(from, lvl int) int {
		closer := "]" + strings.Repeat("=", lvl) + "]"
		k := strings.Index(src[from:], closer)
		if k < 0 {
			return len(src)
		}
		return from + k + len(closer)
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n' || c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			skip(i + 1)
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			if lvl := luaLongBracket(src, i+2); lvl >= 0 {
				skip(longEnd(i+2+lvl+2, lvl))
			} else if k := strings.IndexByte(src[i:], '\n'); k >= 0 {
				skip(i + k)
			} else {
				skip(len(src))
			}
		case isWord(c) && !(c >= '0' && c <= '9'):
			j := i + 1
			for j < len(src) && isWord(src[j]) {
				j++
			}
			out = append(out, luaToken{'n', src[i:j], line})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i + 1
			for j < len(src) {
				d := src[j]
				if isWord(d) || d == '.' && !(j+1 < len(src) && src[j+1] == '.') ||
					(d == '+' || d == '-') && (src[j-1] == 'e' || src[j-1] == 'E') && !strings.HasPrefix(strings.ToLower(src[i:j]), "0x") {
					j++
					continue
				}
				break
			}
			out = append(out, luaToken{'0', src[i:j], line})
			i = j
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j++
			if j > len(src) {
				j = len(src)
			}
			out = append(out, luaToken{'s', src[i:j], line})
			skip(j)
		case luaLongBracket(src, i) >= 0:
			lvl := luaLongBracket(src, i)
			j := longEnd(i+lvl+2, lvl)
			out = append(out, luaToken{'s', src[i:j], line})
			skip(j)
		default:
			n := 1
			if i+2 < len(src) && src[i:i+3] == "..." {
				n = 3
			} else if i+1 < len(src) {
				switch src[i : i+2] {
				case "==", "~=", "<=", ">=", "..":
					n = 2
				}
			}
			out = append(out, luaToken{'p', src[i : i+n], line})
			i += n
		}
	}
	return out
}

// luaSegment is a top-level statement of a chunk: its lines, and what it
// defines and names.
type luaSegment struct {
	first, end int // its lines: [first, end)
	// root segments are always kept: every statement that is not a
	// definition the pruning understands, or whose value the pruning
	// cannot tell is free of effects
	root bool
	// defs are the names it defines: "f" for a local or global f, "T.f"
	// for a member f of table T
	defs []string
	// names are what it names: "f" for a name used whole (a table used
	// whole keeps all its members), "T.f" for a member named as T.f or
	// T:f (which keeps T too), "T." for table T alone (a member's
	// definition needs its table)
	names []string
}

// luaSegments splits the tokens of a chunk of lines lines into its
// top-level statements: a statement starts on a line whose first token
// is outside every block and bracket, at the line's first column.
func luaSegments(lines []string, toks []luaToken) []luaSegment {
	var segs []luaSegment
	depth := 0 // blocks and brackets open
	start := 0 // first token of the current segment
	flush := func(endTok int) {
		if endTok > start {
			segs = append(segs, luaSegment{first: toks[start].line, end: toks[endTok-1].line + 1})
			describeSegment(&segs[len(segs)-1], toks[start:endTok])
		}
		start = endTok
	}
	for k, t := range toks {
		if depth == 0 && k > start && t.line != toks[k-1].line && lines[t.line] != "" &&
			lines[t.line][0] != ' ' && lines[t.line][0] != '\t' {
			flush(k)
		}
		depth += luaDepthChange(t)
		if depth < 0 {
			depth = 0
		}
	}
	flush(len(toks))
	// a segment's end is the line before the next one's first (its
	// trailing lines, a closing "end" or "}", are its own)
	for i := range segs {
		if i+1 < len(segs) && segs[i].end > segs[i+1].first {
			segs[i].end = segs[i+1].first
		}
	}
	return segs
}

// luaDepthChange is how much t opens (+1) or closes (-1) a block or a
// bracket.
func luaDepthChange(t luaToken) int {
	switch {
	case t.kind == 'n' && (t.text == "function" || t.text == "if" || t.text == "do" || t.text == "repeat"):
		return 1
	case t.kind == 'n' && (t.text == "end" || t.text == "until"):
		return -1
	case t.kind == 'p' && (t.text == "(" || t.text == "[" || t.text == "{"):
		return 1
	case t.kind == 'p' && (t.text == ")" || t.text == "]" || t.text == "}"):
		return -1
	}
	return 0
}

// isLuaName reports whether t is a name (not a keyword).
func isLuaName(t luaToken) bool { return t.kind == 'n' && !luaKeywords[t.text] }

// describeSegment fills in what seg, of tokens toks, defines and names,
// and whether it is a root. A definition is one of:
//
//	local function f(...) ... end
//	function f(...) ... end, function T.f(...) ... end, function T:f(...) ... end
//	local a, b = <expressions>   (or without "= ...")
//	a, T.b = <expressions>
//
// where the expressions call nothing outside a function body (a call may
// have effects: it stays). Anything else is a root.
func describeSegment(seg *luaSegment, toks []luaToken) {
	seg.root = true
	body := 0 // the first token of what the definition's value is
	switch {
	case len(toks) >= 4 && toks[0].text == "local" && toks[1].text == "function" && isLuaName(toks[2]):
		seg.defs = []string{toks[2].text}
		body = 3
		seg.root = !luaOneBlock(toks[1:])
	case len(toks) >= 3 && toks[0].text == "function" && isLuaName(toks[1]):
		name, k := toks[1].text, 2
		if k+1 < len(toks) && (toks[k].text == "." || toks[k].text == ":") && isLuaName(toks[k+1]) {
			name += "." + toks[k+1].text
			k += 2
		}
		if k < len(toks) && toks[k].text == "(" {
			seg.defs = []string{name}
			if tbl, _, ok := strings.Cut(name, "."); ok {
				seg.names = []string{tbl + "."} // the table itself, not its other members
			}
			body = k
			seg.root = !luaOneBlock(toks)
		}
	default:
		k := 0
		local := toks[0].text == "local"
		if local {
			k = 1
		}
		var defs []string
		for k < len(toks) {
			if !isLuaName(toks[k]) {
				break
			}
			name := toks[k].text
			k++
			if !local && k+1 < len(toks) && toks[k].text == "." && isLuaName(toks[k+1]) {
				name += "." + toks[k+1].text
				k += 2
			}
			defs = append(defs, name)
			if k < len(toks) && toks[k].text == "," {
				k++
				continue
			}
			break
		}
		if len(defs) == 0 {
			break
		}
		if k == len(toks) && local {
			seg.defs, seg.root = defs, false
			break
		}
		if k < len(toks) && toks[k].text == "=" {
			seg.defs = defs
			body = k + 1
			seg.root = !luaPureExpressions(toks[body:])
			for _, d := range defs {
				if tbl, _, ok := strings.Cut(d, "."); ok {
					seg.names = append(seg.names, tbl+".")
				}
			}
		}
	}
	if seg.root {
		body = 0
		seg.defs = nil
		seg.names = nil
	}
	seg.names = append(seg.names, luaNames(toks[body:])...)
}

// luaOneBlock reports whether toks, from a "function" keyword, are one
// function and nothing after it.
func luaOneBlock(toks []luaToken) bool {
	depth := 0
	for k, t := range toks {
		depth += luaDepthChange(t)
		if depth <= 0 && k > 0 && t.text == "end" {
			return k == len(toks)-1
		}
	}
	return false
}

// luaPureExpressions reports whether toks, a list of expressions, calls
// nothing outside a function body and holds nothing but expressions: no
// call (a name, ")", "]" or a string followed by "(", a string or "{"),
// no second statement (two values in a row, ";", a keyword that starts a
// statement).
func luaPureExpressions(toks []luaToken) bool {
	fn := 0    // function bodies open
	depth := 0 // blocks and brackets open outside function bodies
	for k, t := range toks {
		if fn > 0 {
			fn += luaDepthChange(t)
			continue
		}
		if t.text == "function" && t.kind == 'n' {
			fn = 1
			continue
		}
		if k > 0 {
			p := toks[k-1]
			ender := isLuaName(p) || p.kind == '0' || p.kind == 's' || p.text == ")" || p.text == "]" || p.text == "}" ||
				p.text == "end" || p.text == "true" || p.text == "false" || p.text == "nil" || p.text == "..."
			if ender && (t.text == "(" || t.kind == 's' || t.text == "{" || t.kind == '0' || t.kind == 'n' && !isLuaOperatorWord(t.text)) {
				return false
			}
		}
		switch {
		case t.text == ";":
			return false
		case t.kind == 'n' && luaKeywords[t.text] && !isLuaOperatorWord(t.text) && t.text != "true" && t.text != "false" && t.text != "nil":
			return false
		}
		depth += luaDepthChange(t)
		if depth < 0 {
			return false
		}
	}
	return fn == 0 && depth == 0
}

// isLuaOperatorWord reports whether w is a keyword that is an operator.
func isLuaOperatorWord(w string) bool { return w == "and" || w == "or" || w == "not" }

// luaNames returns what toks name: a name followed by "." or ":" and a
// name as "T.f", any other name whole; field names after "." or ":" and
// table keys ("{k = v}") are not names.
func luaNames(toks []luaToken) []string {
	var out []string
	var brackets []string // the open brackets
	for k, t := range toks {
		switch t.text {
		case "(", "[", "{":
			brackets = append(brackets, t.text)
		case ")", "]", "}":
			if len(brackets) > 0 {
				brackets = brackets[:len(brackets)-1]
			}
		}
		if !isLuaName(t) {
			continue
		}
		if k > 0 && (toks[k-1].text == "." || toks[k-1].text == ":") && toks[k-1].kind == 'p' {
			continue
		}
		if k+1 < len(toks) && toks[k+1].text == "=" && len(brackets) > 0 && brackets[len(brackets)-1] == "{" {
			continue // a key of a table constructor
		}
		if k+2 < len(toks) && (toks[k+1].text == "." || toks[k+1].text == ":") && isLuaName(toks[k+2]) {
			out = append(out, t.text+"."+toks[k+2].text)
			continue
		}
		out = append(out, t.text)
	}
	return out
}

// luaPruneReport says what pruning kept and dropped of a chunk's
// definitions.
type luaPruneReport struct {
	kept, dropped []string // the definitions ("f", "T.f"), in order
}

// luaPrune returns src, a built script, with the top-level definitions
// that nothing kept names dropped, and what it kept and dropped. Every
// statement from the line that starts "-- ---- scripts/" on (the
// transition's own file) and every statement that is not a definition is
// kept; a definition is kept when a kept statement names it (a name used
// whole keeps its definitions and, for a table, every member; T.f keeps
// T's definitions and f's as a member of T), and so on until nothing
// more is named. A dropped definition's lines go, the comment lines
// before it with them; lines "-- ---- " that name a file stay.
func luaPrune(src string) (string, luaPruneReport) {
	lines := strings.Split(src, "\n")
	toks := luaTokens(src)
	segs := luaSegments(lines, toks)
	own := len(lines) // the first line of the transition's own file
	for i, l := range lines {
		if strings.HasPrefix(l, "-- ---- scripts/") {
			own = i
			break
		}
	}
	// who defines each name
	byName := map[string][]int{}  // "f" and "T.f"
	members := map[string][]int{} // "T": its members' segments
	for i := range segs {
		if segs[i].first >= own {
			segs[i].root = true
		}
		for _, d := range segs[i].defs {
			byName[d] = append(byName[d], i)
			if tbl, _, ok := strings.Cut(d, "."); ok {
				members[tbl] = append(members[tbl], i)
			}
		}
	}
	kept := make([]bool, len(segs))
	var work []int
	keep := func(is []int) {
		for _, i := range is {
			if !kept[i] {
				kept[i] = true
				work = append(work, i)
			}
		}
	}
	for i := range segs {
		if segs[i].root {
			keep([]int{i})
		}
	}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		for _, n := range segs[i].names {
			if tbl, f, ok := strings.Cut(n, "."); ok {
				keep(byName[tbl])
				if f != "" {
					keep(byName[n])
				}
				continue
			}
			keep(byName[n])
			keep(members[n])
		}
	}
	var rep luaPruneReport
	drop := make([]bool, len(lines))
	prevEnd := 0
	for i, s := range segs {
		for _, d := range s.defs {
			if kept[i] {
				rep.kept = append(rep.kept, d)
			} else {
				rep.dropped = append(rep.dropped, d)
			}
		}
		if !kept[i] {
			// its comment lines before it, back to the previous statement
			from := s.first
			for from > prevEnd && strings.HasPrefix(strings.TrimLeft(lines[from-1], " \t"), "--") && !strings.HasPrefix(lines[from-1], "-- ---- ") {
				from--
			}
			for l := from; l < s.end; l++ {
				drop[l] = !strings.HasPrefix(lines[l], "-- ---- ")
			}
		}
		prevEnd = s.end
	}
	var b strings.Builder
	b.Grow(len(src))
	for l, line := range lines {
		if drop[l] {
			continue
		}
		b.WriteString(line)
		if l < len(lines)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String(), rep
}

// luaHoistLocals returns src, a built script, with the top-level locals
// of its include files (the lines before the one that starts
// "-- ---- scripts/") all declared at its start, in one statement per
// ten names, and their statements made assignments ("local function f"
// becomes "function f", "local a, b = x, y" becomes "a, b = x, y", a
// "local a, b" alone goes). The order of the declarations is what it
// changes: Lua finds the variable a new function captures by walking the
// list of captured variables from the most recently declared down to it,
// so the script declares the variables its functions capture most
// often last (its functions capture them in fewer steps, every call). It
// returns src unchanged where it cannot tell this is the same program: a
// name declared twice, a name named before its declaration (which meant
// a global there), a declaration without a value over several lines.
func luaHoistLocals(src string) string {
	lines := strings.Split(src, "\n")
	toks := luaTokens(src)
	segs := luaSegments(lines, toks)
	own := len(lines)
	for i, l := range lines {
		if strings.HasPrefix(l, "-- ---- scripts/") {
			own = i
			break
		}
	}
	// the tokens of each segment
	segToks := make([][]luaToken, len(segs))
	k := 0
	for i, s := range segs {
		for k < len(toks) && toks[k].line < s.first {
			k++
		}
		from := k
		for k < len(toks) && toks[k].line < s.end {
			k++
		}
		segToks[i] = toks[from:k]
	}
	type decl struct {
		seg   int
		names []string
		bare  bool // "local a, b" without a value
	}
	var decls []decl
	declared := map[string]int{} // name: its declaring segment
	for i, s := range segs {
		st := segToks[i]
		if s.first >= own || len(st) == 0 || st[0].text != "local" || st[0].kind != 'n' {
			continue
		}
		d := decl{seg: i}
		if len(st) > 2 && st[1].text == "function" && isLuaName(st[2]) {
			d.names = []string{st[2].text}
		} else {
			k := 1
			for k < len(st) && isLuaName(st[k]) {
				d.names = append(d.names, st[k].text)
				k++
				if k < len(st) && st[k].text == "," {
					k++
					continue
				}
				break
			}
			switch {
			case len(d.names) == 0:
				return src
			case k == len(st):
				if s.end-s.first != 1 || st[len(st)-1].line != s.first {
					return src
				}
				d.bare = true
			case st[k].text != "=" || !strings.HasPrefix(lines[s.first], "local "):
				return src
			}
		}
		for _, n := range d.names {
			if _, dup := declared[n]; dup {
				return src
			}
			declared[n] = i
		}
		decls = append(decls, d)
	}
	if len(decls) == 0 {
		return src
	}
	// how many function-making statements capture each name; none may be
	// named before its declaration (but for a parameter or a local of the
	// same name inside the statement, which TestLuaHoistKeepsGlobals
	// checks)
	captures := map[string]int{}
	for i := range segs {
		seen := luaInnerNames(segToks[i])
		for _, n := range luaNames(segToks[i]) {
			base, _, _ := strings.Cut(n, ".")
			at, ok := declared[base]
			if !ok || seen[base] {
				continue
			}
			seen[base] = true
			if i < at {
				return src
			}
			if slices.ContainsFunc(segToks[i], func(t luaToken) bool { return t.kind == 'n' && t.text == "function" }) {
				captures[base]++
			}
		}
	}
	var order []string
	for _, d := range decls {
		order = append(order, d.names...)
	}
	slices.SortStableFunc(order, func(a, b string) int { return captures[a] - captures[b] })
	for _, d := range decls {
		l := segs[d.seg].first
		if d.bare {
			lines[l] = ""
		} else {
			lines[l] = strings.TrimPrefix(lines[l], "local ")
		}
	}
	var head strings.Builder
	for i := 0; i < len(order); i += 10 {
		head.WriteString("local " + strings.Join(order[i:min(i+10, len(order))], ", ") + "\n")
	}
	at := segs[0].first
	var b strings.Builder
	b.Grow(len(src) + head.Len())
	b.WriteString(strings.Join(lines[:at], "\n"))
	if at > 0 {
		b.WriteByte('\n')
	}
	b.WriteString(head.String())
	b.WriteString(strings.Join(lines[at:], "\n"))
	return b.String()
}

// luaInnerNames returns the names toks, a statement, declares inside
// itself: function parameters, locals (but for the statement's own first
// "local"), loop variables.
func luaInnerNames(toks []luaToken) map[string]bool {
	out := map[string]bool{}
	list := func(k int) {
		for k < len(toks) && isLuaName(toks[k]) {
			out[toks[k].text] = true
			if k+1 < len(toks) && toks[k+1].text == "," {
				k += 2
				continue
			}
			return
		}
	}
	for k, t := range toks {
		if t.kind != 'n' {
			continue
		}
		switch {
		case t.text == "local" && k > 0:
			if k+2 < len(toks) && toks[k+1].text == "function" {
				out[toks[k+2].text] = true
			} else {
				list(k + 1)
			}
		case t.text == "for":
			list(k + 1)
		case t.text == "function":
			j := k + 1
			for j < len(toks) && toks[j].text != "(" {
				j++
			}
			list(j + 1)
		}
	}
	return out
}
