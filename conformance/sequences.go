package conformance

import (
	"embed"
	"fmt"
	"io/fs"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"pgregory.net/rapid"

	"github.com/weirflow/weir/engine"
)

// batches is how many subtests share the random sequences; they run in
// parallel, each on its own stores, so that the Go side and the server are
// both kept busy.
const batches = 8

// Steps of one random sequence: many short sequences find more than a few
// long ones, and shrink faster.
const minSteps, maxSteps = 10, 30

// regressionFS holds the checked-in regression tapes.
//
//go:embed testdata/regressions
var regressionFS embed.FS

const regressionDir = "testdata/regressions"

// regressionHint follows every failure of a random sequence.
const regressionHint = "regression tape (keep it as a regression case: save this line in conformance/testdata/regressions/<name>.txt):\n%s"

// source gives the random choices of a sequence: rapid's (recorded on the
// differ's tape) or a recorded tape's.
type source interface {
	draw(lo, hi int, label string) int
	exhausted() bool
}

type rapidSource struct{ t *rapid.T }

func (s rapidSource) draw(lo, hi int, label string) int {
	return rapid.IntRange(lo, hi).Draw(s.t, label)
}
func (s rapidSource) exhausted() bool { return false }

// laterDraw is a draw that the generator gained after tape version 1:
// since is the first tape version that holds it, and replay the value that
// replays an older tape as it was recorded (the behaviour of that time).
type laterDraw struct{ since, replay int }

// laterDraws lists, by label, the draws added after tape version 1. A new
// draw in an existing action is one entry here, with since one above the
// highest so far: the tapes this suite records then carry that version
// (tapeVersion). A new action needs none (actions).
var laterDraws = map[string]laterDraw{
	"expiries": {2, 2},                    // index 2 of the expiries choices is engine.NoExpiries
	"unique":   {3, 0},                    // not unique
	"key":      {4, 0}, "taskkey": {4, 0}, // no concurrency key
	"signal": {5, 1}, "taskdelay": {5, 1}, "startat": {5, 1}, // none
	"deadline":    {6, 2},                        // none
	"webhook":     {7, 2},                        // none
	"cancelrerun": {8, 1}, "finishrerun": {8, 1}, // no re-run after a cancel or an end
	"addtasks":  {9, 1},                           // no task added at run time
	"onfailure": {10, 1}, "addonfailure": {10, 1}, // not one
	"noabsorb": {11, 1}, "addnoabsorb": {11, 1}, // not one
	"worker": {12, 0},                        // a claim that names no worker
	"wftag":  {13, 0}, "listfilter": {13, 0}, // no name and labels; no name or label filter
}

// missingOnTape lists the draws a tape version lacks although laterDraws
// says it holds them: version 9's tapes came from a branch without the
// re-runs of version 8.
var missingOnTape = map[int][]string{9: {"cancelrerun", "finishrerun"}}

// tapeVersion is the version of the tapes this suite records (the highest
// since in laterDraws): a tape starts with "v<version>"; one without is
// version 1.
var tapeVersion = func() int {
	v := 1
	for _, d := range laterDraws {
		v = max(v, d.since)
	}
	return v
}()

// notOnTape reports whether a tape of version v lacks the draw label, and
// then the value that replays it.
func notOnTape(v int, label string) (int, bool) {
	d, ok := laterDraws[label]
	if !ok {
		return 0, false
	}
	if v < d.since || slices.Contains(missingOnTape[v], label) {
		return d.replay, true
	}
	return 0, false
}

// tapeSource replays a tape. A tape ends after the step that failed: the
// sequence ends where the tape does.
type tapeSource struct {
	t       TB
	vals    []int
	i       int
	version int
}

func (s *tapeSource) draw(lo, hi int, label string) int {
	s.t.Helper()
	if v, ok := notOnTape(s.version, label); ok {
		return v
	}
	if s.i >= len(s.vals) {
		s.t.Fatalf("regression tape: ends in the middle of a step (at %s): it was not recorded by this version of the suite", label)
	}
	v := s.vals[s.i]
	s.i++
	if v < lo || v > hi {
		s.t.Fatalf("regression tape: value %d (index %d, %s) is outside [%d, %d]: it was not recorded by this version of the suite", v, s.i-1, label, lo, hi)
	}
	return v
}

func (s *tapeSource) exhausted() bool { return s.i >= len(s.vals) }

// intRange draws an int in [lo, hi] and records it on the tape.
func (d *differ) intRange(lo, hi int, label string) int {
	v := d.src.draw(lo, hi, label)
	d.tape = append(d.tape, v)
	return v
}

func (d *differ) bool(label string) bool { return d.intRange(0, 1, label) == 1 }

func sampled[T any](d *differ, list []T, label string) T {
	return list[d.intRange(0, len(list)-1, label)]
}

func formatTape(tape []int) string {
	var b strings.Builder
	b.WriteString("v" + strconv.Itoa(tapeVersion))
	for _, v := range tape {
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(v))
	}
	return b.String()
}

// parseTape reads a regression file: '#' lines are comments, the rest
// whitespace-separated integers, after an optional "v<version>" (1 when
// absent).
func parseTape(text string) (vals []int, version int, err error) {
	var out []int
	version = 1
	versioned := false
	for ln, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if len(out) == 0 && !versioned && strings.HasPrefix(f, "v") {
				n, err := strconv.Atoi(f[1:])
				if err != nil || n < 1 || n > tapeVersion {
					return nil, 0, fmt.Errorf("line %d: %q is not a tape version this suite knows (1 to %d)", ln+1, f, tapeVersion)
				}
				version, versioned = n, true
				continue
			}
			v, err := strconv.Atoi(f)
			if err != nil {
				return nil, 0, fmt.Errorf("line %d: %q is not an integer", ln+1, f)
			}
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, 0, fmt.Errorf("no tape")
	}
	return out, version, nil
}

// runSequences drives n random operation sequences, each on a fresh store
// and a fresh model sharing one clock, in parallel batches. rapid.Check
// runs -rapid.checks sequences per call (100 unless set), so each batch
// calls it until its share is done (n is rounded up to a multiple of that
// count).
func runSequences(t suiteT, mk maker, n int) {
	if n == 0 {
		t.Skip(SequencesEnv + "=0")
	}
	per := 100 // sequences per rapid.Check call: -rapid.checks
	if f, ok := flagInt("rapid.checks"); ok && f > 0 {
		per = f
	}
	var done atomic.Int64
	start := time.Now()
	t.Run("batches", func(t suiteT) {
		calls := (n + per - 1) / per // rapid.Check calls in all
		nb := min(batches, calls)
		for b := range nb {
			share := calls / nb // this batch's calls
			if b < calls%nb {
				share++
			}
			t.Run(strconv.Itoa(b), func(t suiteT) {
				t.Parallel()
				prop := func(rt *rapid.T) {
					done.Add(1)
					runSequence(rt, t, mk, rapidSource{rt})
				}
				for i := 0; i < share && !t.Failed() && t.Context().Err() == nil; i++ {
					rapid.Check(t, prop)
				}
			})
		}
	})
	el := time.Since(start)
	if nd, ok := t.(*node); ok {
		nd.r.sequences.Add(done.Load())
	}
	t.Logf("%s: %d sequences (counting shrinking) in %v: %.1f sequences/s", t.Name(),
		done.Load(), el.Round(time.Millisecond), float64(done.Load())/math.Max(el.Seconds(), 1e-9))
}

// runSequence is one random sequence: a fresh store and model, 10 to 30
// random steps, the whole state compared after each (through the store's
// Observer when it has one; then, in one sequence of four, at the end once
// more through the store's own reads), and every job list paged through
// at the end.
func runSequence(rt tb, t TB, mk maker, src source) {
	d := &differ{
		t: rt, ctx: t.Context(), src: src, toks: map[string]string{},
		plans: map[string]engine.Plan{}, specs: map[string]engine.JobSpec{},
	}
	cfg := engine.DefaultConfig()
	cfg.Limits.MaxBackoff = 700 * time.Millisecond
	cfg.Retention = time.Duration(sampled(d, []int{0, 800, 7 * 24 * 3600 * 1000}, "retention")) * time.Millisecond
	d.clk = newClock()
	d.m = mk.model(cfg)
	d.s = mk.store(t, cfg, d.clk.Now)
	defer closeStore(d.s)
	d.qi, _ = d.s.(QueueInspector)
	d.obs, _ = d.s.(Observer)
	steps := d.intRange(minSteps, maxSteps, "steps")
	// With an Observer, one sequence in four (drawn, so that rapid shrinks
	// toward it) ends with a comparison through the store's own reads.
	each := d.intRange(0, 3, "checkEach") == 0
	for d.step = 0; d.step < steps && !src.exhausted(); d.step++ {
		d.doStep()
		d.check()
		d.checkEvents()
	}
	if d.obs != nil && each {
		d.checkEach()
	}
	d.walkLists()
}

// runRegressions replays every regression tape of the suite.
func runRegressions(t suiteT, mk maker, dir fs.FS) {
	if dir == nil {
		sub, err := fs.Sub(regressionFS, regressionDir)
		if err != nil {
			t.Fatal(err)
		}
		dir = sub
	}
	names, err := fs.Glob(dir, "*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Skip("no regression tapes")
	}
	for _, name := range names {
		t.Run(strings.TrimSuffix(path.Base(name), ".txt"), func(t suiteT) {
			t.Parallel()
			b, err := fs.ReadFile(dir, name)
			if err != nil {
				t.Fatal(err)
			}
			tape, version, err := parseTape(string(b))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			runSequence(t, t, mk, &tapeSource{t: t, vals: tape, version: version})
		})
	}
}
