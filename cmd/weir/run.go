package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	weirpkg "github.com/weirflow/weir"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/codes"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/shell"
	"github.com/weirflow/weir/weirotel"
	"github.com/weirflow/weir/worker"
	"github.com/weirflow/weir/workflowfile"
)

// pollInterval is how often progress reads the workflow's state.
const pollInterval = 100 * time.Millisecond

// shutdownTimeout is how long running commands get to finish when weir is
// interrupted, before they are killed.
const shutdownTimeout = 5 * time.Second

func newRunCmd(g *globalFlags) *cobra.Command {
	var concurrency int
	var asJSON bool
	c := &cobra.Command{
		Use:   "run FILE",
		Short: "Run a workflow file to its end, with workers in this process",
		Long: "run submits the workflow of FILE, runs workers for every queue it names, shows\n" +
			"progress (one line per change) and a summary. With no Redis URL it uses an embedded\n" +
			"in-process server on a loopback port: an open signal task then shows the weir\n" +
			"signal command (with that server's --redis URL) that completes it from another\n" +
			"terminal, and run delivers the file's webhook itself (signed with\n" +
			"WEIR_WEBHOOK_SECRET_<NAME>), waiting for the delivery to end; on a shared Redis the\n" +
			"workers there deliver it. Exit status: 0 completed (a webhook not delivered is a\n" +
			"warning), 1 ended another way or interrupted, 2 usage or validation error. A\n" +
			"well-formed TRACEPARENT variable (W3C) is stored with the workflow: its tasks'\n" +
			"spans join that trace (spec/tracing.md).",
		Example: "  weir run examples/pipeline.yaml\n" +
			"  weir run --redis redis://127.0.0.1:6379/0 examples/saga.yaml --json",
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if concurrency < 1 {
				return command.Usage(fmt.Errorf("--concurrency must be at least 1, got %d", concurrency))
			}
			return runFile(c.Context(), g, args[0], concurrency, asJSON, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	c.Flags().IntVar(&concurrency, "concurrency", 8, "commands run at once")
	c.Flags().BoolVar(&asJSON, "json", false, "print the final workflow record as JSON instead of progress and summary")
	return c
}

func runFile(ctx context.Context, g *globalFlags, path string, concurrency int, asJSON bool, stdout, stderr io.Writer) error {
	// Validate before starting anything: a bad file is status 2 at once.
	if lf, err := workflowfile.Load(path, weirpkg.DefaultLimits()); err != nil {
		return command.Usage(err)
	} else if len(lf.GoQueues) > 0 {
		// Its shell workers would take those jobs for commands.
		return command.Usage(fmt.Errorf("%s: tasks with a payload are for Go handlers (queues %s): weir run runs shell tasks only; submit it (weir submit) and run Go workers for those queues", path, strings.Join(lf.GoQueues, ", ")))
	}
	cn, err := g.open(ctx, true)
	if err != nil {
		return err
	}
	defer cn.Close()
	limits := cn.store.Config().Limits
	lf, err := workflowfile.Load(path, limits)
	if err != nil {
		return command.Usage(err)
	}
	tr, err := startTracing(ctx, "run", stderr)
	if err != nil {
		return err
	}
	defer tr.shutdown()
	// the workflow's trace: a span of the whole run, the submit's parent
	ctx, span := tr.start(ctx, "weir run", weirotel.AttrWorkflow.String(lf.Plan.ID))
	defer span.End()
	nudge := make(chan struct{}, 1)
	w := newShellWorker(cn.store, limits, lf.Queues, concurrency, stderr, func(worker.Event) {
		select {
		case nudge <- struct{}{}:
		default:
		}
	}, false, tr.worker, cn.embeddedWorker)
	deliver, err := runWebhook(w, lf, cn.url != "")
	if err != nil {
		return err
	}
	if _, err := submitPlan(ctx, cn.store, lf); err != nil {
		return err
	}
	if err := w.Start(ctx); err != nil {
		return command.Fail(err)
	}
	defer func() {
		// After the end, nothing runs; after an interrupt, running commands
		// are killed at once and their jobs handed back.
		grace := shutdownTimeout
		if ctx.Err() != nil {
			grace = 0
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
		defer cancel()
		_ = w.Stop(sctx)
	}()

	// An open signal task shows how another terminal signals it.
	signal := signalCommand(lf.Plan.ID, cn.url, g.namespace)
	var progress func(weirpkg.Workflow)
	switch {
	case asJSON:
		progress = newSignalPrinter(stderr, signal)
	case isTerminal(stdout):
		fmt.Fprintf(stdout, "workflow %s: %d tasks from %s\n", lf.Plan.ID, len(lf.Plan.Tasks), path)
		progress = newLiveProgress(stdout, signal)
	default:
		fmt.Fprintf(stdout, "workflow %s: %d tasks from %s\n", lf.Plan.ID, len(lf.Plan.Tasks), path)
		lines, hints := newProgress(stdout), newSignalPrinter(stdout, signal)
		progress = func(w weirpkg.Workflow) { lines(w); hints(w) }
	}
	final, err := follow(ctx, cn.store, lf.Plan.ID, progress, nudge)
	if err != nil {
		if ctx.Err() != nil {
			return command.Fail(fmt.Errorf("interrupted: workflow %s is still %s", lf.Plan.ID, final.State))
		}
		return command.Fail(err)
	}
	if asJSON {
		if err := printJSON(stdout, workflowfile.NewRecord(final)); err != nil {
			return command.Fail(err)
		}
	} else {
		fmt.Fprintln(stdout) // the summary stands apart from the progress above it
		printSummary(stdout, final)
	}
	if h := final.Webhook; h != nil {
		out := stdout
		if asJSON {
			out = io.Discard
		}
		if deliver {
			if err := awaitDelivery(ctx, cn.store, h, out, stderr); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(out, "webhook: the delivery %s is left to the workers of queue %s (weir worker delivers it)\n", h.Job, h.Queue)
		}
	}
	if final.State != weirpkg.WorkflowCompleted {
		span.SetStatus(codes.Error, "workflow "+string(final.State))
		return command.Fail(command.ErrQuiet)
	}
	return nil
}

// submitPlan submits the file's plan; a plan the store refuses is a usage
// error naming the file.
func submitPlan(ctx context.Context, s engine.Store, lf *workflowfile.File) (bool, error) {
	res, err := s.Submit(ctx, engine.SubmitParams{Plan: lf.Plan, TraceParent: traceParentOf(ctx), Name: lf.WorkflowName, Labels: lf.Labels})
	if err != nil {
		var ve *weirpkg.ValidationError
		switch {
		case errors.As(err, &ve):
			return false, command.Usage(&workflowfile.Error{File: lf.Name, Task: taskWhere(ve.Task), Field: ve.Field, Problem: ve.Problem})
		case errors.Is(err, weirpkg.ErrWorkflowExists):
			return false, command.Fail(fmt.Errorf("%s: field id: a workflow %q exists with a different plan", lf.Name, lf.Plan.ID))
		}
		return false, command.Fail(fmt.Errorf("submit %s: %w", lf.Name, err))
	}
	return res.Created, nil
}

func taskWhere(name string) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf("task %q", name)
}

// newShellWorker returns a worker of shell tasks for queues; each of
// adjust, when given, changes its configuration first (weir worker's
// lease).
func newShellWorker(s engine.Store, limits weirpkg.Limits, queues []string, concurrency int, stderr io.Writer, observer worker.Observer, schedules bool, adjust ...func(*worker.Config)) *worker.Worker {
	cfg := worker.Config{
		Schedules:       schedules,
		Observer:        observer,
		Concurrency:     concurrency,
		SweepInterval:   100 * time.Millisecond,
		ShutdownTimeout: shutdownTimeout,
		Limits:          limits,
		Logger:          slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	for _, f := range adjust {
		f(&cfg)
	}
	w := worker.New(s, cfg)
	shell.Register(w, queues, limits.MaxResult, shell.AddTasksWith(func(data []byte, dir string) ([]engine.TaskSpec, bool, error) {
		// a shell task's tasks to add (spec/workflow-file.md, Adding tasks at run time)
		return workflowfile.ParseAdded("WEIR_ADD_TASKS", data, workflowfile.Options{Dir: dir, Limits: limits})
	}))
	return w
}

// follow waits for the workflow to end, calling progress (when not nil)
// with each snapshot read while it runs (every pollInterval, and at once
// after each receive on nudge), and returns the final snapshot.
func follow(ctx context.Context, s engine.Store, id string, progress func(weirpkg.Workflow), nudge <-chan struct{}) (weirpkg.Workflow, error) {
	type res struct {
		w   weirpkg.Workflow
		err error
	}
	done := make(chan res, 1)
	go func() {
		w, err := awaitWorkflow(ctx, s, id)
		done <- res{w, err}
	}()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	var last weirpkg.Workflow
	for {
		select {
		case r := <-done:
			if r.err != nil {
				return last, r.err
			}
			if progress != nil {
				progress(r.w)
			}
			return r.w, nil
		case <-nudge:
		case <-t.C:
		}
		if progress == nil {
			continue
		}
		if w, err := s.GetWorkflow(ctx, id); err == nil { // the await reports lasting errors
			last = w
			progress(w)
		}
	}
}

// awaitWorkflow is s.AwaitWorkflow that returns as soon as ctx is done.
// The Redis store's await notices a cancelled context only at its next
// refresh (up to a minute later); its goroutine then ends by itself, or
// when the client is closed.
func awaitWorkflow(ctx context.Context, s engine.Store, id string) (weirpkg.Workflow, error) {
	type res struct {
		w   weirpkg.Workflow
		err error
	}
	done := make(chan res, 1)
	go func() {
		w, err := s.AwaitWorkflow(ctx, id)
		done <- res{w, err}
	}()
	select {
	case r := <-done:
		return r.w, r.err
	case <-ctx.Done():
		return weirpkg.Workflow{}, ctx.Err()
	}
}

// newProgress returns a function that prints one line per change of a
// task's (or its undo's) state or attempt, and of the workflow's state.
func newProgress(out io.Writer) func(weirpkg.Workflow) {
	start := time.Now()
	type key struct {
		task string
		undo bool
	}
	type seen struct {
		state   weirpkg.State
		attempt int
	}
	tasks := map[key]seen{}
	var wfState weirpkg.WorkflowState
	return func(w weirpkg.Workflow) {
		stamp := fmt.Sprintf("%6.1fs", time.Since(start).Seconds())
		for _, t := range w.Tasks {
			k := key{t.Name, false}
			if s := (seen{t.State, t.Attempt}); tasks[k] != s {
				tasks[k] = s
				fmt.Fprintf(out, "%s  %-20s %s%s\n", stamp, t.Name, t.State, attemptNote(t.State, t.Attempt, t.Error))
			}
			if t.Undo != nil && t.Undo.State != "" {
				k := key{t.Name, true}
				if s := (seen{t.Undo.State, t.Undo.Attempt}); tasks[k] != s {
					tasks[k] = s
					fmt.Fprintf(out, "%s  %-20s undo %s%s\n", stamp, t.Name, t.Undo.State, attemptNote(t.Undo.State, t.Undo.Attempt, t.Undo.Error))
				}
			}
		}
		if w.State != wfState {
			if wfState != "" {
				fmt.Fprintf(out, "%s  workflow %s\n", stamp, w.State)
			}
			wfState = w.State
		}
	}
}

// isTerminal reports whether w is a terminal that understands cursor
// movement.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// newLiveProgress returns a function that keeps one line per task (and one
// for the workflow) on screen, rewritten in place with ANSI cursor
// movement whenever one changes; then, when signal is not nil, a line per
// open signal task with the command that signals it (signal's).
func newLiveProgress(out io.Writer, signal func(task string) string) func(weirpkg.Workflow) {
	start := time.Now()
	var shown []string
	return func(w weirpkg.Workflow) {
		lines := append(liveLines(w, time.Since(start)), signalLines(w, signal)...)
		var b strings.Builder
		if len(shown) > 0 {
			fmt.Fprintf(&b, "\x1b[%dA", len(shown)) // back to the block's first line
		}
		for _, l := range lines {
			b.WriteString("\r\x1b[2K")
			b.WriteString(l)
			b.WriteString("\n")
		}
		b.WriteString("\x1b[J") // clears what a longer block left below
		_, _ = io.WriteString(out, b.String())
		shown = lines
	}
}

// liveLines renders the live block: one line per task, then the workflow's
// line.
func liveLines(w weirpkg.Workflow, elapsed time.Duration) []string {
	width := 4
	for _, t := range w.Tasks {
		width = max(width, len(t.Name))
	}
	lines := make([]string, 0, len(w.Tasks)+1)
	counts := map[weirpkg.State]int{}
	for _, t := range w.Tasks {
		counts[t.State]++
		l := fmt.Sprintf("  %-*s  %-9s%s", width, t.Name, t.State, attemptNote(t.State, t.Attempt, t.Error))
		if t.Progress != nil && t.State == weirpkg.Running {
			l += "  " + progressText(t.Progress)
		}
		if t.Undo != nil && t.Undo.State != "" {
			l += fmt.Sprintf("  [undo %s%s]", t.Undo.State, attemptNote(t.Undo.State, t.Undo.Attempt, t.Undo.Error))
		}
		lines = append(lines, truncate(l, 160))
	}
	lines = append(lines, fmt.Sprintf("workflow %s  %d/%d completed  %.1fs", w.State, counts[weirpkg.Completed], len(w.Tasks), elapsed.Seconds()))
	return lines
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func attemptNote(s weirpkg.State, attempt int, errText string) string {
	var b strings.Builder
	if attempt > 0 && s != weirpkg.Waiting && s != weirpkg.Pending {
		fmt.Fprintf(&b, " (attempt %d)", attempt)
	}
	if errText != "" && (s == weirpkg.Queued || s.Ended()) {
		fmt.Fprintf(&b, ": %s", oneLine(errText))
	}
	return b.String()
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		// the last line of a stderr tail says most
		first, _, _ := strings.Cut(s, ":")
		s = first + ": …" + s[i+1:]
	}
	return s
}

// printSummary prints the workflow's end and one line per task.
func printSummary(out io.Writer, w weirpkg.Workflow) {
	took := ""
	if !w.EndedAt.IsZero() && !w.CreatedAt.IsZero() {
		took = " in " + w.EndedAt.Sub(w.CreatedAt).Round(time.Millisecond).String()
	}
	reason := ""
	if w.Reason != "" {
		reason = fmt.Sprintf(" (reason: %s)", w.Reason)
	}
	run := ""
	if w.Run > 1 {
		run = fmt.Sprintf(" (run %d)", w.Run)
	}
	fmt.Fprintf(out, "workflow %s %s%s%s%s\n", w.ID, w.State, run, reason, took)
	if w.Name != "" {
		fmt.Fprintf(out, "  name %s\n", w.Name)
	}
	if len(w.Labels) > 0 {
		fmt.Fprintf(out, "  labels %s\n", labelsText(w.Labels))
	}
	switch {
	case w.DeadlineHit:
		fmt.Fprintf(out, "  deadline %s passed: cancelled by it\n", w.Deadline.UTC().Format(time.RFC3339Nano))
	case !w.Deadline.IsZero():
		fmt.Fprintf(out, "  deadline %s\n", w.Deadline.UTC().Format(time.RFC3339Nano))
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  TASK\tSTATE\tATTEMPTS\tUNDO\tDETAIL")
	for _, t := range w.Tasks {
		undo := "-"
		if t.Undo != nil {
			undo = "not run"
			if t.Undo.State != "" {
				undo = string(t.Undo.State)
			}
		}
		detail := ""
		switch {
		case t.Error != "":
			detail = oneLine(t.Error)
		case t.State == weirpkg.Completed:
			if s, ok := shell.DecodeResult(t.Result).(string); ok {
				detail = "result: " + quoteShort(s)
			}
		}
		if t.Progress != nil && !t.State.Ended() {
			detail = strings.TrimSpace(progressText(t.Progress) + " " + detail)
		}
		if t.Undo != nil && t.Undo.Error != "" {
			detail += " undo: " + oneLine(t.Undo.Error)
		}
		name := t.Name
		if t.AddedBy != "" {
			name += " (+" + t.AddedBy + ")" // added at run time by that task
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\n", name, t.State, t.Attempt, undo, detail)
	}
	_ = tw.Flush()
}

// progressText is a progress report as status shows it: "40% step 2 of 5".
func progressText(p *weirpkg.Progress) string {
	return strings.TrimSpace(strconv.FormatFloat(p.Percent, 'f', -1, 64) + "% " + oneLine(p.Message))
}

func quoteShort(s string) string {
	s = strings.TrimRight(s, "\n")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return fmt.Sprintf("%q", s)
}

func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
