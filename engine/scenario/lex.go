package scenario

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// word is one whitespace-separated token of a line: a positional value
// ("completed", "$t1") or a key=value pair ("token=$t1", `error="a b"`).
type word struct {
	key    string // empty for a positional word
	val    string // the decoded value; for a variable, its name without '$'
	isVar  bool   // the value is a variable ($name); "$_" matches anything
	quoted bool   // the value was a quoted string (always literal)
	text   string // as written
}

var (
	keyRe    = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	varRe    = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	repeatRe = regexp.MustCompile(`^([^*"$\s])\*([0-9]+)$`)
)

// maxRepeat bounds the c*N shorthand, so a typo cannot ask for gigabytes.
const maxRepeat = 16 << 20

// lex splits a line into words. A '#' at the start of a word begins a
// comment that runs to the end of the line; inside a quoted string it is
// text.
func lex(s string) ([]word, error) {
	var out []word
	i := 0
	for i < len(s) {
		c := s[i]
		if c == ' ' || c == '\t' {
			i++
			continue
		}
		if c == '#' {
			break
		}
		start := i
		for i < len(s) && s[i] != ' ' && s[i] != '\t' {
			if s[i] != '"' {
				i++
				continue
			}
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated quoted string in %q", s[start:])
			}
			i = j + 1
		}
		w, err := parseWord(s[start:i])
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

func parseWord(tok string) (word, error) {
	w := word{text: tok}
	rest := tok
	if k := strings.IndexByte(tok, '='); k > 0 && !strings.Contains(tok[:k], `"`) {
		w.key, rest = tok[:k], tok[k+1:]
		if !keyRe.MatchString(w.key) {
			return w, fmt.Errorf("bad key %q in %q (a key is letters, digits, _ . or -)", w.key, tok)
		}
	}
	switch {
	case strings.HasPrefix(rest, `"`):
		v, err := strconv.Unquote(rest)
		if err != nil {
			return w, fmt.Errorf("bad quoted string %s (Go syntax expected)", rest)
		}
		w.val, w.quoted = v, true
	case strings.HasPrefix(rest, "$"):
		if !varRe.MatchString(rest[1:]) {
			return w, fmt.Errorf("bad variable %q (a '$' and letters, digits or '_')", rest)
		}
		w.val, w.isVar = rest[1:], true
	default:
		if strings.Contains(rest, `"`) {
			return w, fmt.Errorf("stray quote in %q", tok)
		}
		v, err := expandRepeat(rest)
		if err != nil {
			return w, err
		}
		w.val = v
	}
	return w, nil
}

// expandRepeat turns the shorthand c*N into N copies of the character c.
func expandRepeat(s string) (string, error) {
	m := repeatRe.FindStringSubmatch(s)
	if m == nil {
		return s, nil
	}
	n, err := strconv.Atoi(m[2])
	if err != nil || n > maxRepeat {
		return "", fmt.Errorf("repeat %q is over %d", s, maxRepeat)
	}
	return strings.Repeat(m[1], n), nil
}

// format writes a value the way the parser reads it back: bare when it is
// made of safe characters, c*N for a long run of one character, else a Go
// quoted string.
func format(v string) string {
	if v == "" {
		return `""`
	}
	if len(v) >= 16 && v[0] > ' ' && v[0] < 0x7f && strings.Count(v, v[:1]) == len(v) && repeatRe.MatchString(v[:1]+"*1") {
		return v[:1] + "*" + strconv.Itoa(len(v))
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		safe := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("_.:/,@+-", c) >= 0
		if !safe {
			return strconv.Quote(v)
		}
	}
	return v
}

// field is one word of a rendered reply or state.
type field struct {
	key string
	val string
}

func (f field) String() string {
	if f.key == "" {
		return format(f.val)
	}
	return f.key + "=" + format(f.val)
}

// line is one rendered reply line.
type line []field

func (l line) String() string {
	parts := make([]string, len(l))
	for i, f := range l {
		parts[i] = f.String()
	}
	return strings.Join(parts, " ")
}

func (w word) String() string {
	if w.isVar {
		if w.key == "" {
			return "$" + w.val
		}
		return w.key + "=$" + w.val
	}
	return field{w.key, w.val}.String()
}

func wordsString(ws []word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.String()
	}
	return strings.Join(parts, " ")
}
