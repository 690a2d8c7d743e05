package scenario

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/engine"
)

// StartTime is the clock of a scenario before its first "at" or "advance":
// unix millisecond 1000, so that no time a scenario shows is the zero time.
const StartTime int64 = 1000

// Scenario is a parsed scenario file.
type Scenario struct {
	// Name is the file name given to Parse; messages start with it.
	Name string
	// Doc is the comment block at the top of the file, without the '#'s.
	Doc string
	// Config is what the target must be created with: engine.DefaultConfig
	// changed by the file's "config" lines.
	Config engine.Config
	// Steps are the operations and expectations, in file order.
	Steps []*Step
	// lines is the file as read, one string a line (Rewrite edits it).
	lines []string
}

// Step is one operation or expectation of a scenario.
type Step struct {
	// Line is the 1-based line number of the operation in the file.
	Line int
	// Text is the operation line as written, without its comment.
	Text string
	// Now is the scenario clock when the step runs.
	Now time.Time
	op  operation
	// want holds the expected reply lines (empty for an expectation).
	want []reply
}

// reply is one "> ..." line.
type reply struct {
	line  int
	words []word
}

// ParseError is a problem in a scenario file, at a line.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// operation is a parsed step.
type operation interface {
	// needsReply reports whether "> " lines must follow (store operations).
	needsReply() bool
	// more takes an indented continuation line; nil when none is accepted.
	more(ws []word) error
	// exec runs the step against the runner's target and compares.
	exec(r *runner, st *Step) error
}

// noMore is embedded by operations that take no continuation lines.
type noMore struct{}

func (noMore) more([]word) error { return errNoMore }

var errNoMore = fmt.Errorf("this operation takes no indented lines")

// ParseFS parses every file of fsys that matches pattern (fs.Glob syntax),
// sorted by name, each named by its base name. spec.Scenarios() holds the
// golden scenarios; os.DirFS reads a directory.
func ParseFS(fsys fs.FS, pattern string) ([]*Scenario, error) {
	paths, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var out []*Scenario
	for _, p := range paths {
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		s, err := Parse(path.Base(p), bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Parse reads a scenario. name is used in messages ("chain.txt:12: ...").
// The first problem is returned as a *ParseError with its line number.
func Parse(name string, r io.Reader) (*Scenario, error) {
	p := &parser{s: &Scenario{Name: name, Config: engine.DefaultConfig()}, now: StartTime, docOpen: true}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		p.s.lines = append(p.s.lines, sc.Text())
		if err := p.line(n, sc.Text()); err != nil {
			line := n
			if e := (*missingReply)(nil); errors.As(err, &e) {
				line = e.line
			}
			return nil, &ParseError{File: name, Line: line, Msg: err.Error()}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &ParseError{File: name, Line: n + 1, Msg: err.Error()}
	}
	if err := p.close(); err != nil {
		return nil, &ParseError{File: name, Line: p.cur.Line, Msg: err.Error()}
	}
	if len(p.s.Steps) == 0 {
		return nil, &ParseError{File: name, Line: n, Msg: "no operations"}
	}
	return p.s, nil
}

type parser struct {
	s       *Scenario
	cur     *Step // last operation
	now     int64
	docOpen bool // still in the leading comment block
	doc     []string
}

// missingReply is a store operation with no '>' line, found later.
type missingReply struct {
	line int
	text string
}

func (e *missingReply) Error() string {
	return fmt.Sprintf("%q needs its expected reply on a following '>' line", e.text)
}

// close checks the last operation got its reply.
func (p *parser) close() error {
	if p.cur != nil && p.cur.op.needsReply() && len(p.cur.want) == 0 {
		return &missingReply{line: p.cur.Line, text: p.cur.Text}
	}
	return nil
}

func (p *parser) line(n int, text string) error {
	trimmed := strings.TrimSpace(text)
	if p.docOpen {
		if c, ok := strings.CutPrefix(trimmed, "#"); ok {
			p.doc = append(p.doc, strings.TrimPrefix(c, " "))
			return nil
		}
		if trimmed != "" || len(p.doc) > 0 {
			p.docOpen = false
			p.s.Doc = strings.Join(p.doc, "\n")
		}
	}
	if c, ok := strings.CutPrefix(trimmed, ">"); ok {
		ws, err := lex(c)
		if err != nil {
			return err
		}
		if len(ws) == 0 {
			return fmt.Errorf("empty reply line")
		}
		if p.cur == nil || !p.cur.op.needsReply() {
			return fmt.Errorf("a reply line must follow a store operation")
		}
		if ws[0].key == "" && !ws[0].isVar && ws[0].val == "error" {
			if len(ws) != 2 || !knownCode(ws[1].val) {
				return fmt.Errorf("an error reply is 'error CODE' with one of %s", codes())
			}
		}
		p.cur.want = append(p.cur.want, reply{line: n, words: ws})
		return nil
	}
	ws, err := lex(text)
	if err != nil {
		return err
	}
	if len(ws) == 0 {
		return nil
	}
	if ws[0].key != "" || ws[0].isVar || ws[0].quoted {
		return fmt.Errorf("a line starts with an operation name, not %s", ws[0].text)
	}
	indented := text[0] == ' ' || text[0] == '\t'
	if indented {
		if p.cur == nil || len(p.cur.want) > 0 {
			return fmt.Errorf("indented line %q does not continue an operation", trimmed)
		}
		if err := p.cur.op.more(ws); err != nil {
			return err
		}
		p.cur.Text += "\n" + strings.TrimSpace(stripComment(text))
		return nil
	}
	name, args := ws[0].val, ws[1:]
	switch name {
	case "at":
		if len(args) != 1 {
			return fmt.Errorf("usage: at <unix ms>")
		}
		t, err := strconv.ParseInt(args[0].val, 10, 64)
		if err != nil || args[0].key != "" {
			return fmt.Errorf("at: %q is not a time in unix milliseconds", args[0].text)
		}
		if t < p.now {
			return fmt.Errorf("at %d goes back in time (the clock is at %d)", t, p.now)
		}
		return p.setClock(t)
	case "advance":
		if len(args) != 1 || args[0].key != "" {
			return fmt.Errorf("usage: advance <duration>")
		}
		d, err := parseDur(args[0].val)
		if err != nil || d < 0 {
			return fmt.Errorf("advance: %q is not a duration such as 1500ms, 30s, 2h or 7d", args[0].val)
		}
		return p.setClock(p.now + d.Milliseconds())
	case "stepback":
		if len(args) != 1 || args[0].key != "" {
			return fmt.Errorf("usage: stepback <duration>")
		}
		d, err := parseDur(args[0].val)
		if err != nil || d <= 0 {
			return fmt.Errorf("stepback: %q is not a duration such as 1500ms, 30s, 2h or 7d", args[0].val)
		}
		if d.Milliseconds() >= p.now {
			return fmt.Errorf("stepback %s goes before the epoch (the clock is at %d)", args[0].val, p.now)
		}
		return p.setClock(p.now - d.Milliseconds())
	case "config":
		if len(p.s.Steps) > 0 {
			return fmt.Errorf("config must come before the first operation")
		}
		return parseConfig(&p.s.Config, args)
	}
	if err := p.close(); err != nil {
		return err
	}
	op, err := parseOp(name, args, p.now)
	if err != nil {
		return err
	}
	p.cur = &Step{Line: n, Text: strings.TrimSpace(stripComment(text)), Now: time.UnixMilli(p.now).UTC(), op: op}
	p.s.Steps = append(p.s.Steps, p.cur)
	return nil
}

func (p *parser) setClock(t int64) error {
	if err := p.close(); err != nil {
		return err
	}
	p.now = t
	p.cur = nil
	return nil
}

// stripComment cuts a line at a '#' that starts a word outside quotes.
func stripComment(s string) string {
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

func knownCode(c string) bool { return weir.ErrorForCode(c) != nil }

func codes() string {
	var cs []string
	for _, e := range weir.Errors {
		cs = append(cs, e.Code)
	}
	return strings.Join(cs, ", ")
}

func parseOp(name string, args []word, now int64) (operation, error) {
	switch name {
	case "submit":
		return parseSubmit(args, now)
	case "enqueue":
		return parseEnqueue(args, now)
	case "claim":
		c, err := parseClaim(args)
		if err != nil {
			return nil, err
		}
		return &opClaim{p: c}, nil
	case "finish":
		return parseFinish(args)
	case "heartbeat":
		return parseHeartbeat(args)
	case "progress":
		return parseProgress(args)
	case "expire":
		o, err := parseOpts(args, map[string]kind{"max": kInt})
		if err != nil {
			return nil, err
		}
		return &opExpire{max: o.int("max", 0)}, nil
	case "cancel":
		return parseCancel(args)
	case "limit":
		if len(args) != 2 || args[0].key != "" || args[1].key != "" {
			return nil, fmt.Errorf("usage: limit <queue> <concurrency>")
		}
		n, err := strconv.Atoi(args[1].val)
		if err != nil {
			return nil, fmt.Errorf("limit: concurrency %q is not an integer", args[1].val)
		}
		return &opQueue{verb: "limit", queue: args[0].val, limit: n}, nil
	case "rate":
		return parseRate(args)
	case "due":
		c, err := parseClaim(args)
		if err != nil {
			return nil, err
		}
		return &opDue{p: c}, nil
	case "keylimit":
		if len(args) != 2 || args[0].key != "" || args[1].key != "" {
			return nil, fmt.Errorf("usage: keylimit <queue> <concurrency>")
		}
		n, err := strconv.Atoi(args[1].val)
		if err != nil {
			return nil, fmt.Errorf("keylimit: concurrency %q is not an integer", args[1].val)
		}
		return &opQueue{verb: "keylimit", queue: args[0].val, limit: n}, nil
	case "purge", "pause", "resume":
		if len(args) != 1 || args[0].key != "" {
			return nil, fmt.Errorf("usage: %s <queue>", name)
		}
		return &opQueue{verb: name, queue: args[0].val}, nil
	case "list":
		return parseList(args)
	case "jobs":
		return parseJobs(args)
	case "retry":
		return parseRetry(args, now)
	case "delete":
		return parseDelete(args)
	case "rerun":
		return parseRerun(args)
	case "queues":
		if len(args) != 0 {
			return nil, fmt.Errorf("usage: queues")
		}
		return &opQueues{}, nil
	case "expect":
		return parseExpect(args, now)
	case "schedule":
		return parseSchedule(args, now)
	case "signal":
		return parseSignal(args)
	}
	return nil, fmt.Errorf("unknown operation %q", name)
}

// kind is the type of an option's value.
type kind int

const (
	kStr   kind = iota // text or bytes
	kInt               // a decimal integer
	kDur               // a duration: 1500ms, 30s, 2h, 7d
	kBool              // true/false, or the bare key for true
	kList              // comma-separated names; "-" for none
	kTime              // unix ms, "+<duration>" from now, or "-" for none
	kToken             // text or a variable
)

// opts are the key=value options of a line, checked against their kinds.
type opts map[string]word

func parseOpts(ws []word, spec map[string]kind) (opts, error) {
	o := opts{}
	for _, w := range ws {
		if k, ok := spec[w.val]; ok && k == kBool && w.key == "" && !w.isVar && !w.quoted {
			w = word{key: w.val, val: "true", text: w.text}
		}
		if w.key == "" {
			return nil, fmt.Errorf("unexpected word %s (options are key=value; known keys: %s)", w.text, keys(spec))
		}
		k, ok := spec[w.key]
		if !ok {
			return nil, fmt.Errorf("unknown option %q (known: %s)", w.key, keys(spec))
		}
		if _, dup := o[w.key]; dup {
			return nil, fmt.Errorf("option %q given twice", w.key)
		}
		if w.isVar && k != kToken {
			return nil, fmt.Errorf("option %q cannot be a variable", w.key)
		}
		if err := checkKind(w, k); err != nil {
			return nil, err
		}
		o[w.key] = w
	}
	return o, nil
}

func keys(spec map[string]kind) string {
	var ks []string
	for k := range spec {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, ", ")
}

func checkKind(w word, k kind) error {
	var err error
	switch k {
	case kInt:
		_, err = strconv.Atoi(w.val)
	case kDur:
		_, err = parseDur(w.val)
	case kBool:
		_, err = strconv.ParseBool(w.val)
	case kTime:
		if w.val != "-" && !strings.HasPrefix(w.val, "+") {
			_, err = strconv.ParseInt(w.val, 10, 64)
		} else if w.val != "-" {
			_, err = parseDur(w.val[1:])
		}
	}
	if err != nil {
		return fmt.Errorf("option %s: bad value %q", w.key, w.val)
	}
	return nil
}

func (o opts) has(k string) bool { _, ok := o[k]; return ok }

func (o opts) str(k string) string { return o[k].val }

func (o opts) bytes(k string) []byte {
	if w, ok := o[k]; ok {
		return []byte(w.val)
	}
	return nil
}

func (o opts) int(k string, def int) int {
	if w, ok := o[k]; ok {
		n, _ := strconv.Atoi(w.val)
		return n
	}
	return def
}

func (o opts) dur(k string, def time.Duration) time.Duration {
	if w, ok := o[k]; ok {
		d, _ := parseDur(w.val)
		return d
	}
	return def
}

func (o opts) bool(k string, def bool) bool {
	if w, ok := o[k]; ok {
		b, _ := strconv.ParseBool(w.val)
		return b
	}
	return def
}

func (o opts) list(k string) []string { return splitList(o[k].val) }

func splitList(s string) []string {
	if s == "" || s == "-" {
		return nil
	}
	return strings.Split(s, ",")
}

// parseDur reads a Go duration, or a whole number of days ("7d").
func parseDur(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil {
			return 0, err
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

func parseConfig(c *engine.Config, args []word) error {
	spec := map[string]kind{
		"retention": kDur, "max_tasks": kInt, "max_edges": kInt, "max_payload": kInt,
		"max_result": kInt, "max_error": kInt, "max_attempts": kInt, "max_batch": kInt,
		"max_lease": kDur, "max_backoff": kDur, "max_checkpoint": kInt, "partitions": kInt,
	}
	o, err := parseOpts(args, spec)
	if err != nil {
		return err
	}
	if len(o) == 0 {
		return fmt.Errorf("config needs at least one key=value")
	}
	c.Retention = o.dur("retention", c.Retention)
	l := &c.Limits
	l.MaxTasks = o.int("max_tasks", l.MaxTasks)
	l.MaxEdges = o.int("max_edges", l.MaxEdges)
	l.MaxPayload = o.int("max_payload", l.MaxPayload)
	l.MaxResult = o.int("max_result", l.MaxResult)
	l.MaxError = o.int("max_error", l.MaxError)
	l.MaxAttempts = o.int("max_attempts", l.MaxAttempts)
	l.MaxBatch = o.int("max_batch", l.MaxBatch)
	l.MaxLease = o.dur("max_lease", l.MaxLease)
	l.MaxBackoff = o.dur("max_backoff", l.MaxBackoff)
	l.MaxCheckpoint = o.int("max_checkpoint", l.MaxCheckpoint)
	c.Partitions = o.int("partitions", c.Partitions)
	return c.ValidatePartitions()
}

// positional takes the first n words, which must have no key.
func positional(ws []word, n int, usage string) ([]string, []word, error) {
	if len(ws) < n {
		return nil, nil, fmt.Errorf("usage: %s", usage)
	}
	out := make([]string, n)
	for i := range n {
		if ws[i].key != "" || ws[i].isVar {
			return nil, nil, fmt.Errorf("usage: %s", usage)
		}
		out[i] = ws[i].val
	}
	return out, ws[n:], nil
}

// timeValue reads unix ms or +<duration> from now (checked by checkKind).
func timeValue(v string, now int64) int64 {
	if d, ok := strings.CutPrefix(v, "+"); ok {
		dd, _ := parseDur(d)
		return now + dd.Milliseconds()
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}
