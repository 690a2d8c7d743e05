package main

import (
	"context"
	"errors"
	"fmt"
	weirpkg "github.com/weirflow/weir"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/rest"
	"github.com/weirflow/weir/worker"
	"github.com/weirflow/weir/workflowfile"
)

// The commands that drive a shared Redis (--redis or WEIR_REDIS_URL).

func withStore(g *globalFlags, f func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		cn, err := g.open(c.Context(), false)
		if err != nil {
			return err
		}
		defer cn.Close()
		return f(c.Context(), cn.store, c, args)
	}
}

// storeErr turns a store error into a command error: not found and ended
// are the caller's mistake (status 1 with a plain message).
func storeErr(what string, err error) error {
	switch {
	case errors.Is(err, weirpkg.ErrNotFound):
		return command.Fail(fmt.Errorf("%s: not found", what))
	case errors.Is(err, weirpkg.ErrInvalid):
		return command.Usage(fmt.Errorf("%s: %w", what, err))
	}
	return command.Fail(fmt.Errorf("%s: %w", what, err))
}

func newSubmitCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "submit FILE",
		Short: "Submit a workflow file to a shared Redis and print its ID",
		Example: "  weir submit examples/pipeline.yaml\n" +
			"  weir wait \"$(weir submit examples/pipeline.yaml)\"",
		Args: exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			limits := s.(interface{ Config() engine.Config }).Config().Limits
			lf, err := workflowfile.Load(args[0], limits)
			if err != nil {
				return command.Usage(err)
			}
			if _, err := submitPlan(ctx, s, lf); err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), lf.Plan.ID)
			return nil
		}),
	}
}

func newStatusCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "status ID",
		Short: "Show a workflow's state, or a job's (its attempts, their workers and errors)",
		Example: "  weir status photo-42\n" +
			"  weir status photo-42 --json | jq -r .state\n" +
			"  weir status photo-42/resize    # a task's job: its attempt history",
		Args: exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			w, err := s.GetWorkflow(ctx, args[0])
			if errors.Is(err, weirpkg.ErrNotFound) || errors.Is(err, weirpkg.ErrInvalid) {
				// not a workflow: a job (a plain job's ID, or <wf>/<task>)
				j, jerr := s.GetJob(ctx, args[0])
				if jerr == nil {
					return showJob(c.OutOrStdout(), j, asJSON)
				}
				if !errors.Is(jerr, weirpkg.ErrNotFound) && !errors.Is(jerr, weirpkg.ErrInvalid) {
					return storeErr("job "+args[0], jerr)
				}
			}
			if err != nil {
				return storeErr("workflow or job "+args[0], err)
			}
			if err := show(c.OutOrStdout(), w, asJSON); err != nil || asJSON {
				return err
			}
			printWebhook(ctx, c.OutOrStdout(), s, w)
			return nil
		}),
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the workflow record (or the job's, as GET /v1/jobs/{id}) as JSON")
	return c
}

func show(out io.Writer, w weirpkg.Workflow, asJSON bool) error {
	if asJSON {
		return printJSON(out, workflowfile.NewRecord(w))
	}
	printSummary(out, w)
	return nil
}

func newWaitCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "wait ID",
		Short: "Wait for a workflow to end; exit 0 if it completed, 1 otherwise",
		Example: "  weir wait photo-42\n" +
			"  weir wait photo-42 --json > final.json",
		Args: exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			w, err := awaitWorkflow(ctx, s, args[0])
			if err != nil {
				return storeErr("workflow "+args[0], err)
			}
			if err := show(c.OutOrStdout(), w, asJSON); err != nil {
				return command.Fail(err)
			}
			if w.State != weirpkg.WorkflowCompleted {
				return command.Fail(command.ErrQuiet)
			}
			return nil
		}),
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the final workflow record as JSON")
	return c
}

func newCancelCmd(g *globalFlags) *cobra.Command {
	var noUndo bool
	c := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a workflow (its undos run unless --no-undo or the file said undo_on_cancel: false)",
		Example: "  weir cancel photo-42\n" +
			"  weir cancel photo-42 --no-undo",
		Args: exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			p := engine.CancelWorkflowParams{ID: args[0]}
			if noUndo {
				f := false
				p.Undo = &f
			}
			r, err := s.CancelWorkflow(ctx, p)
			if err != nil {
				if errors.Is(err, weirpkg.ErrWorkflowEnded) {
					return command.Fail(fmt.Errorf("workflow %s has already ended", args[0]))
				}
				return storeErr("workflow "+args[0], err)
			}
			fmt.Fprintf(c.OutOrStdout(), "workflow %s %s\n", args[0], r.WorkflowState)
			return nil
		}),
	}
	c.Flags().BoolVar(&noUndo, "no-undo", false, "do not run the undos of completed tasks")
	return c
}

func newLsCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	var state, cursor, name string
	var labels []string
	var limit int
	var prefix string
	c := &cobra.Command{
		Use:   "ls",
		Short: "List workflows, newest first, a page at a time (--limit, --cursor)",
		Long: "ls lists the namespace's workflows, newest first: one page of --limit (100; at most\n" +
			"1000) read with one store call, then \"more: --cursor C\" when more follow (on standard\n" +
			"error with --json); --cursor C lists the next page. --state keeps one state's workflows;\n" +
			"--name N those whose name starts with N; --label k=v (repeatable) those with every label;\n" +
			"--prefix P those whose ID starts with P, in ID order (only those are read: an index of IDs).\n" +
			"With --name, --label or --prefix one call examines at most 1000 workflows, so a page may be short,\n" +
			"even empty, and still print \"more: --cursor C\": go on with it to search further.",
		Example: "  weir ls\n" +
			"  weir ls --state failed --limit 20\n" +
			"  weir ls --name nightly --label team=data\n" +
			"  weir ls --prefix order-17\n" +
			"  weir ls --json --limit 1000 | jq -r '.[].id'",
		Args: exactArgs(0),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			if state != "" && !slices.Contains(workflowStates, weirpkg.WorkflowState(state)) {
				return command.Usage(fmt.Errorf("--state %q is no workflow state: give one of %s", state, joinStates()))
			}
			p := weirpkg.ListParams{State: weirpkg.WorkflowState(state), Limit: limit, Cursor: cursor, Name: name, IDPrefix: prefix}
			for _, kv := range labels {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return command.Usage(fmt.Errorf("--label %q is not key=value", kv))
				}
				if _, dup := p.Labels[k]; dup {
					return command.Usage(fmt.Errorf("--label %q: key %q is given twice", kv, k))
				}
				if p.Labels == nil {
					p.Labels = map[string]string{}
				}
				p.Labels[k] = v
			}
			if err := engine.ValidateListFilter(p); err != nil {
				if ve := (*weirpkg.ValidationError)(nil); errors.As(err, &ve) && ve.Field == "id_prefix" {
					return command.Usage(fmt.Errorf("--prefix: %w", err))
				}
				return command.Usage(fmt.Errorf("--name or --label: %w", err))
			}
			page, err := s.ListWorkflows(ctx, p)
			if err != nil {
				return storeErr("list", err)
			}
			out := c.OutOrStdout()
			if asJSON {
				recs := make([]workflowfile.Record, len(page.Workflows))
				for i, w := range page.Workflows {
					recs[i] = workflowfile.NewRecord(w)
				}
				if err := printJSON(out, recs); err != nil {
					return err
				}
				printMore(c.ErrOrStderr(), page.NextCursor)
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tSTATE\tTASKS\tCREATED\tLABELS")
			for _, w := range page.Workflows {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", w.ID, orDash(w.Name), w.State, len(w.Tasks), w.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), labelsText(w.Labels))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			printMore(out, page.NextCursor)
			return nil
		}),
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the page's workflow records as a JSON array (docs/cli.md)")
	c.Flags().StringVar(&state, "state", "", "only workflows in this state ("+joinStates()+")")
	c.Flags().IntVar(&limit, "limit", 100, "workflows a page, 1 to 1000")
	c.Flags().StringVar(&cursor, "cursor", "", "go on after the page that printed this cursor (more: --cursor ...)")
	c.Flags().StringVar(&name, "name", "", "only workflows whose name starts with this")
	c.Flags().StringVar(&prefix, "prefix", "", "only workflows whose ID starts with this, in ID order")
	c.Flags().StringArrayVar(&labels, "label", nil, "only workflows with this label, key=value (repeatable: every one)")
	return c
}

// labelsText is a workflow's labels as weir ls and weir status print
// them: key=value by key, joined by ",", or "-" for none.
func labelsText(labels map[string]string) string {
	if len(labels) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

// newQueuesCmd is weir queues, and weir queue ls (path "queue ls").
func newQueuesCmd(g *globalFlags, path string) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   path[strings.LastIndexByte(path, ' ')+1:],
		Short: "List queues with their job counts and limits",
		Example: "  weir " + path + "\n" +
			"  weir " + path + " --json | jq '.[] | select(.paused)'",
		Args: exactArgs(0),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			qs, err := s.Queues(ctx)
			if err != nil {
				return storeErr("queues", err)
			}
			if asJSON {
				recs := make([]any, len(qs))
				for i, q := range qs {
					recs[i] = rest.QueueJSON(q)
				}
				return printJSON(c.OutOrStdout(), recs)
			}
			ended, err := endedCounts(ctx, s)
			if err != nil {
				return storeErr("queue stats", err)
			}
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "QUEUE\tPAUSED\tREADY\tDELAYED\tRUNNING\tFAILED\tCANCELLED\tLIMIT\tRATE\tKEY-LIMIT")
			for _, q := range qs {
				limit, keyLimit := "-", "-"
				if q.Concurrency > 0 {
					limit = strconv.Itoa(q.Concurrency)
				}
				if q.KeyConcurrency > 0 {
					keyLimit = strconv.Itoa(q.KeyConcurrency)
				}
				failed, cancelled := "-", "-"
				if n, ok := ended[q.Name]; ok {
					failed, cancelled = strconv.Itoa(n[0]), strconv.Itoa(n[1])
				}
				fmt.Fprintf(tw, "%s\t%t\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", q.Name, q.Paused, q.Ready, q.Delayed, q.Running,
					failed, cancelled, limit, rateColumn(q), keyLimit)
			}
			return tw.Flush()
		}),
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the queues as a JSON array, each the object of GET /v1/queues (docs/cli.md)")
	return c
}

// endedCounts returns each queue's failed and cancelled counts (its
// dead letters and cancelled jobs within retention: weir.QueueStats) when
// the store reads them (Stats, as a metrics scrape does), else none.
func endedCounts(ctx context.Context, s engine.Store) (map[string][2]int, error) {
	st, ok := s.(interface {
		Stats(ctx context.Context) (weirpkg.Stats, error)
	})
	if !ok {
		return nil, nil
	}
	stats, err := st.Stats(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string][2]int, len(stats.Queues))
	for _, q := range stats.Queues {
		out[q.Name] = [2]int{q.Failed, q.Cancelled}
	}
	return out, nil
}

// newQueueCmd groups the queue commands: list the queues, pause, resume
// or purge one, change its limits.
func newQueueCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "queue",
		Short: "Queue commands: ls, pause, resume, purge, limit, rate, key-limit, retry-jobs, cancel-jobs, delete-jobs",
		Example: "  weir queue ls\n" +
			"  weir queue pause default\n" +
			"  weir queue limit default 4",
		Args: cobra.ArbitraryArgs,
		RunE: groupRun,
	}
	c.AddCommand(newQueuesCmd(g, "queue ls"), newPauseCmd(g, true, false), newPauseCmd(g, false, false), newPurgeCmd(g, false))
	c.AddCommand(&cobra.Command{
		Use:   "limit QUEUE N",
		Short: "Let at most N jobs of a queue run at once across every worker (0: no limit)",
		Long: "weir queue limit QUEUE N stores a concurrency limit for the queue: every claim, by\n" +
			"every worker, leases a job of it only while fewer than N of its jobs run. A slot is\n" +
			"free again when its job's lease ends, however it ends (a crashed worker's lease\n" +
			"expires). Lowering it stops no running job. 0 removes the limit.",
		Example: "  weir queue limit default 4\n" +
			"  weir queue limit default 0",
		Args: exactArgs(2),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[1])
			if err != nil {
				return command.Usage(fmt.Errorf("weir queue limit: concurrency %q is not an integer", args[1]))
			}
			p := engine.LimitQueueParams{Queue: args[0], Concurrency: n}
			if err := engine.ValidateLimitQueue(p); err != nil {
				return command.Usage(fmt.Errorf("weir queue limit: %w", err))
			}
			if err := s.LimitQueue(ctx, p); err != nil {
				return storeErr("queue "+args[0], err)
			}
			if n == 0 {
				fmt.Fprintf(c.OutOrStdout(), "queue %s: no limit\n", args[0])
			} else {
				fmt.Fprintf(c.OutOrStdout(), "queue %s: at most %d running\n", args[0], n)
			}
			return nil
		}),
	})
	c.AddCommand(newQueueRateCmd(g))
	c.AddCommand(newBulkJobsCmd(g, "retry"), newBulkJobsCmd(g, "cancel"), newBulkJobsCmd(g, "delete"))
	c.AddCommand(&cobra.Command{
		Use:   "key-limit QUEUE N",
		Short: "Let at most N jobs of each concurrency key of a queue run at once (0: no limit)",
		Long: "weir queue key-limit QUEUE N stores a per-key limit for the queue: every claim, by\n" +
			"every worker, leases a job with a concurrency key (a job document's or a task's\n" +
			"\"key\") only while fewer than N jobs of that key run, and serves the next key's\n" +
			"jobs meanwhile. A slot is free again when its job's lease ends, however it ends.\n" +
			"Lowering it stops no running job. 0 removes the limit.",
		Example: "  weir queue key-limit default 2\n" +
			"  weir queue key-limit default 0",
		Args: exactArgs(2),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[1])
			if err != nil {
				return command.Usage(fmt.Errorf("weir queue key-limit: concurrency %q is not an integer", args[1]))
			}
			p := engine.LimitKeysParams{Queue: args[0], Concurrency: n}
			if err := engine.ValidateLimitKeys(p); err != nil {
				return command.Usage(fmt.Errorf("weir queue key-limit: %w", err))
			}
			if err := s.LimitKeys(ctx, p); err != nil {
				return storeErr("queue "+args[0], err)
			}
			if n == 0 {
				fmt.Fprintf(c.OutOrStdout(), "queue %s: no per-key limit\n", args[0])
			} else {
				fmt.Fprintf(c.OutOrStdout(), "queue %s: at most %d running per key\n", args[0], n)
			}
			return nil
		}),
	})
	return c
}

// newPauseCmd is weir queue pause, or weir queue resume; alias: the top
// level's weir pause or resume, kept from before weir queue had them.
func newPauseCmd(g *globalFlags, pause, alias bool) *cobra.Command {
	name, verb := "resume", "Resume"
	if pause {
		name, verb = "pause", "Pause"
	}
	return &cobra.Command{
		Use:     name + " QUEUE",
		Short:   verb + " claims from a queue (every worker obeys)" + aliasNote(alias, "queue "+name),
		Example: "  weir queue " + name + " default",
		Args:    exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			if !engine.ValidName(args[0]) {
				return command.Usage(fmt.Errorf("queue name %q must "+engine.NameRule, args[0]))
			}
			f := s.ResumeQueue
			if pause {
				f = s.PauseQueue
			}
			if err := f(ctx, args[0]); err != nil {
				return storeErr("queue "+args[0], err)
			}
			fmt.Fprintf(c.OutOrStdout(), "queue %s %sd\n", args[0], name)
			return nil
		}),
	}
}

func newWorkerCmd(g *globalFlags) *cobra.Command {
	var queues string
	var concurrency int
	var schedules bool
	var webhooks string
	var timing workerTiming
	var mf workerMetricsFlag
	c := &cobra.Command{
		Use:   "worker",
		Short: "Run shell tasks from queues until interrupted (SIGINT/SIGTERM drain gracefully)",
		Long: "worker runs the shell tasks of --queues (and delivers webhooks, and fires schedules)\n" +
			"until SIGINT or SIGTERM. Then it claims nothing more and lets running commands finish\n" +
			"for up to --grace (WEIR_GRACE; default 5s; 0: none) before it kills them and hands\n" +
			"their jobs back, to run again from the start on another worker. A job stays leased\n" +
			"for --lease (WEIR_LEASE; default 30s) without a heartbeat: when a worker dies, its\n" +
			"jobs run again elsewhere that long after, and its commands are killed with it\n" +
			"(spec/workflow-file.md, How a command runs). Flags beat the variables.",
		Example: "  weir worker\n" +
			"  weir worker --queues default,images --concurrency 16 --grace 2m",
		Args: exactArgs(0),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			if concurrency < 1 {
				return command.Usage(fmt.Errorf("--concurrency must be at least 1, got %d", concurrency))
			}
			limits := s.(interface{ Config() engine.Config }).Config().Limits
			if err := timing.resolve(c, limits.MaxLease); err != nil {
				return err
			}
			var qs []string
			for _, q := range strings.Split(queues, ",") {
				q = strings.TrimSpace(q)
				if !engine.ValidName(q) {
					return command.Usage(fmt.Errorf("--queues: queue name %q must "+engine.NameRule, q))
				}
				if !slices.Contains(qs, q) {
					qs = append(qs, q)
				}
			}
			wm, stopMetrics, err := mf.start(c, s, c.OutOrStdout())
			if err != nil {
				return err
			}
			defer func() { _ = stopMetrics() }()
			var observer worker.Observer
			if wm != nil {
				observer = wm.Observe
			}
			tr, err := startTracing(ctx, "worker", c.ErrOrStderr())
			if err != nil {
				return err
			}
			defer tr.shutdown()
			w := newShellWorker(s, limits, qs, concurrency, c.ErrOrStderr(), observer, schedules, func(cfg *worker.Config) { cfg.Lease = timing.lease }, tr.worker)
			if webhooks != "" {
				if !engine.ValidName(webhooks) {
					return command.Usage(fmt.Errorf("--webhooks: queue name %q must "+engine.NameRule, webhooks))
				}
				if slices.Contains(qs, webhooks) {
					return command.Usage(fmt.Errorf("--webhooks: queue %q is also in --queues", webhooks))
				}
				if err := w.Webhooks(webhookConfig(webhooks)); err != nil {
					return command.Fail(err)
				}
			}
			if err := w.Start(ctx); err != nil {
				return command.Fail(err)
			}
			fmt.Fprintf(c.ErrOrStderr(), "weir worker: queues %s, concurrency %d, lease %v, grace %v\n", strings.Join(qs, ","), concurrency, timing.lease, timing.grace)
			<-ctx.Done()
			// Running commands get the grace to finish; then they are
			// killed and their jobs handed back.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timing.grace)
			defer cancel()
			if err := w.Stop(sctx); err != nil {
				return command.Fail(fmt.Errorf("stop: %w", err))
			}
			fmt.Fprintln(c.ErrOrStderr(), "weir worker: stopped")
			return nil
		}),
	}
	c.Flags().StringVar(&queues, "queues", workflowfile.DefaultQueue, "comma-separated queues to run tasks from")
	c.Flags().IntVar(&concurrency, "concurrency", 8, "commands run at once")
	c.Flags().StringVar(&webhooks, "webhooks", weirpkg.WebhookQueue, "deliver workflow webhooks from this queue, signed with WEIR_WEBHOOK_SECRET_<NAME> from the environment (\"\": none)")
	c.Flags().DurationVar(&timing.lease, "lease", defaultLease, "how long a claimed job stays leased without a heartbeat: a dead worker's jobs run again elsewhere after it; default $WEIR_LEASE, else 30s")
	c.Flags().DurationVar(&timing.grace, "grace", defaultGrace, "on SIGINT/SIGTERM, how long running commands get to finish before they are killed and their jobs handed back (0: at once); default $WEIR_GRACE, else 5s")
	c.Flags().BoolVar(&schedules, "schedules", true, "fire the namespace's schedules (weir schedule); each tick fires once however many workers do")
	mf.register(c)
	return c
}

// orDash is s, or "-" when empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
