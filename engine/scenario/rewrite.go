package scenario

import (
	"context"
	"strings"
)

// Rewrite replays s against t as Run does, but where a store operation's
// reply differs from its '>' lines it takes the reply instead of stopping,
// and returns the file with those lines replaced by the reply (changed is
// false, and text nil, when every reply matched). A reply line keeps the
// variables of the line it replaces where they still match, so later
// steps go on using them; the replaced lines lose their trailing comments.
// A difference that is not a reply (an expectation, a lease deadline) is
// still returned as a *Mismatch.
func Rewrite(ctx context.Context, s *Scenario, t Target) (text []byte, changed bool, err error) {
	r := &runner{ctx: ctx, s: s, t: t, vars: map[string]string{}, res: &Result{}, rewrites: map[*Step][]string{}}
	if _, err := r.run(); err != nil {
		return nil, false, err
	}
	if len(r.rewrites) == 0 {
		return nil, false, nil
	}
	// the file's line numbers (1-based) of each rewritten reply: the first
	// takes the new lines, the others go
	replace := map[int][]string{}
	drop := map[int]bool{}
	for st, lines := range r.rewrites {
		var prefixes []string
		for i, w := range st.want {
			prefixes = append(prefixes, replyPrefix(s.lines[w.line-1]))
			if i > 0 {
				drop[w.line] = true
			}
		}
		out := make([]string, len(lines))
		for i, l := range lines {
			switch {
			case i < len(prefixes):
				out[i] = prefixes[i] + l
			case strings.HasPrefix(l, "dep "):
				out[i] = ">   " + l
			default:
				out[i] = "> " + l
			}
		}
		replace[st.want[0].line] = out
	}
	var b strings.Builder
	for i, l := range s.lines {
		n := i + 1
		switch {
		case replace[n] != nil:
			for _, nl := range replace[n] {
				b.WriteString(nl + "\n")
			}
		case drop[n]:
		default:
			b.WriteString(l + "\n")
		}
	}
	return []byte(b.String()), true, nil
}

// replyPrefix is what comes before the first word of a '>' line: its
// indentation, the '>' and the spaces after it.
func replyPrefix(l string) string {
	i := strings.IndexByte(l, '>') + 1
	for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	return l[:i]
}

// rewriteLines renders got as reply lines, keeping each variable of the
// '>' line it replaces (same position, same key) whose value still
// matches, and binding new ones into b.
func (r *runner) rewriteLines(st *Step, got []line, b map[string]string) []string {
	out := make([]string, len(got))
	for i, g := range got {
		var old []word
		if i < len(st.want) && len(st.want[i].words) == len(g) {
			old = st.want[i].words
		}
		parts := make([]string, len(g))
		for j, f := range g {
			parts[j] = f.String()
			if old != nil && old[j].isVar && old[j].key == f.key && r.matchValue(old[j], f.val, b) {
				parts[j] = old[j].String()
			}
		}
		out[i] = strings.Join(parts, " ")
	}
	return out
}
