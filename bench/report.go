package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Report is the outcome of one Run. Its JSON form is what `weir bench
// --json` prints; figures a server cannot give (memory and script time on
// the embedded miniredis) are null.
type Report struct {
	// Server is RedisServer, EmbeddedServer or LiteServer.
	Server string `json:"server"`
	// RedisVersion is the server's redis_version (empty on miniredis).
	RedisVersion string `json:"redis_version,omitempty"`
	// Masters is the number of masters of the Redis Cluster measured
	// (Options.Cluster; 0 on a single server): the commands, script time
	// and memory are the sums over them, and the ceiling's keys share one
	// slot, so it is one master's.
	Masters int `json:"masters,omitempty"`
	// Partitions is the namespace's Options.Config.Partitions (0: one).
	Partitions int    `json:"partitions,omitempty"`
	Namespace  string `json:"namespace"`
	// EventsOff: the run had the namespace's event stream off
	// (Options.EventsOff).
	EventsOff bool   `json:"events_off"`
	GoVersion string `json:"go_version"`
	CPUs      int    `json:"cpus"`
	// CeilingPerS is the ceiling: trivial three-write EVALSHA calls per
	// second by CeilingClients parallel callers on the bench's client,
	// over its two runs (CeilingRunsPerS: before and after the scenarios).
	// Every CeilingRatio divides by it.
	CeilingPerS     float64   `json:"ceiling_per_s"`
	CeilingClients  int       `json:"ceiling_clients"`
	CeilingCalls    int64     `json:"ceiling_calls"`
	CeilingSeconds  float64   `json:"ceiling_s"`
	CeilingRunsPerS []float64 `json:"ceiling_runs_per_s"`
	// CommandsSource says how commands were counted.
	CommandsSource string   `json:"commands_source"`
	Scenarios      []Result `json:"scenarios"`
	// KeysLeft is the number of keys of the namespace found after the
	// cleanup (0 unless the cleanup failed).
	KeysLeft    int     `json:"keys_left"`
	WallSeconds float64 `json:"wall_s"`
	// Machine is the machine of the run: CPU, cores, load before and after.
	Machine Machine `json:"machine"`
	// CallPath is the path of the store's calls: CallPathFunctions or
	// CallPathScripts.
	CallPath string `json:"call_path"`
	// Spread is the rows of a spread (`weir bench --spread`,
	// Options.Spread), which runs instead of the scenarios and the
	// ceiling: one row per partition count and shape, in run order.
	Spread []SpreadRow `json:"spread,omitempty"`
	// Compare is this run next to a saved one (`weir bench --compare`).
	Compare *Comparison `json:"compare,omitempty"`
}

// Result is one row: one scenario at one concurrency and process count.
// Rates are per second; each rate has its fraction of the ceiling.
type Result struct {
	Name        string `json:"name"`
	Concurrency int    `json:"concurrency"`
	Processes   int    `json:"processes"`
	// Variant names the limit of a limits row ("none", "concurrency", ...).
	Variant string `json:"variant,omitempty"`
	// Jobs is the number of jobs (plain jobs or workflow tasks) the rates
	// and per-job figures divide by.
	Jobs      int `json:"jobs"`
	Workflows int `json:"workflows,omitempty"`
	// Seconds is the measured interval of JobsPerS.
	Seconds float64 `json:"seconds"`
	// JobsPerS is the processing rate (tasks for workflows; for submit,
	// tasks submitted per second of the submit call).
	JobsPerS     float64 `json:"jobs_per_s"`
	CeilingRatio float64 `json:"ceiling_ratio"`
	// CommandsPerJob and RoundTripsPerJob cover the processing (plain) or
	// the whole scenario, submit included (chain, fanin, submit).
	CommandsPerJob   float64 `json:"commands_per_job"`
	RoundTripsPerJob float64 `json:"round_trips_per_job"`
	// Plain: enqueue figures (Producers parallel Enqueue calls).
	EnqueuePerS             float64 `json:"enqueue_per_s,omitempty"`
	EnqueueCeilingRatio     float64 `json:"enqueue_ceiling_ratio,omitempty"`
	EnqueueCommandsPerJob   float64 `json:"enqueue_commands_per_job,omitempty"`
	EnqueueRoundTripsPerJob float64 `json:"enqueue_round_trips_per_job,omitempty"`
	// Memory: used_memory growth per retained finished job (plain) or
	// workflow (chain, fanin; submit: the submitted, unfinished DAG).
	MemoryPerJobBytes      *float64 `json:"memory_per_job_bytes,omitempty"`
	MemoryPerWorkflowBytes *float64 `json:"memory_per_workflow_bytes,omitempty"`
	// ServerUsPerJob is the server time of the script calls per job
	// (INFO commandstats usec of FCALL, FCALL_RO, EVALSHA and EVAL) while
	// the jobs ran (plain, limits); null on miniredis.
	ServerUsPerJob *float64 `json:"server_us_per_job,omitempty"`
	// ServerCPUUsPerJob is the Redis server's CPU per job: the growth of
	// INFO cpu used_cpu_user + used_cpu_sys (the whole server process:
	// other clients' commands and its own background work included;
	// summed over a cluster's masters) over the phase WorkerCPUUsPerJob
	// covers (chain: from the submit, which it includes, to the end); null
	// on miniredis and for submit.
	ServerCPUUsPerJob *float64 `json:"server_cpu_us_per_job,omitempty"`
	// WorkerCPUUsPerJob is the worker process's own CPU per job, user +
	// system (getrusage of the process, not wall time), while the jobs
	// ran (plain, limits, chain, fanin): in a row with Processes 1, this
	// process from the worker's start to the last job's event: the
	// worker, its go-redis client, the bench's event counter and the Go
	// runtime (GC included; the garbage of earlier phases is collected
	// before it starts), not the producers, which finished before (chain:
	// from the return of the submit); in a multi-process row, the sum of
	// the worker processes' own CPU from "go" to "stop" (this process,
	// which only waits, left out). null on the embedded miniredis (it
	// runs in this process), where getrusage is missing, and for submit.
	WorkerCPUUsPerJob *float64 `json:"worker_cpu_us_per_job,omitempty"`
	// ProducerCPUUsPerJob is this process's CPU per job (per task for
	// fanin) while the producers enqueued the jobs (plain, limits) or
	// submitted the workflows (fanin): Producers goroutines and their
	// client, no worker running; null where WorkerCPUUsPerJob is.
	ProducerCPUUsPerJob *float64 `json:"producer_cpu_us_per_job,omitempty"`
	// Chain.
	StepsPerS      float64 `json:"steps_per_s,omitempty"`
	PromotionP50Ms float64 `json:"promotion_p50_ms,omitempty"`
	PromotionP90Ms float64 `json:"promotion_p90_ms,omitempty"`
	PromotionP99Ms float64 `json:"promotion_p99_ms,omitempty"`
	PromotionMaxMs float64 `json:"promotion_max_ms,omitempty"`
	// Fan-in.
	TasksPerS           float64 `json:"tasks_per_s,omitempty"`
	SubmitWorkflowsPerS float64 `json:"submit_workflows_per_s,omitempty"`
	// Submit: the Submit call, and the server time of its script calls
	// (INFO commandstats usec of FCALL, FCALL_RO, EVALSHA and EVAL; null on miniredis).
	SubmitMs    float64  `json:"submit_ms,omitempty"`
	ScriptMs    *float64 `json:"script_ms,omitempty"`
	ScriptCalls int64    `json:"script_calls,omitempty"`
}

// WriteTable writes the report as a table.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	server := r.Server
	if r.RedisVersion != "" {
		server += " " + r.RedisVersion
	}
	if len(r.Spread) > 0 {
		fmt.Fprintf(&b, "weir bench --spread on %s (%s, %d CPUs), a Redis Cluster of %d masters\n", server, r.GoVersion, r.CPUs, r.Masters)
	} else {
		fmt.Fprintf(&b, "weir bench on %s (namespace %s, %s, %d CPUs)\n", server, r.Namespace, r.GoVersion, r.CPUs)
	}
	if r.Masters > 0 && len(r.Spread) == 0 {
		fmt.Fprintf(&b, "Redis Cluster of %d masters: commands, script time and memory summed over them; the ceiling is one master's (its keys share a slot)\n", r.Masters)
	}
	if r.Partitions > 1 {
		fmt.Fprintf(&b, "%d partitions\n", r.Partitions)
	}
	if r.EventsOff {
		fmt.Fprintf(&b, "events off (--events-off)\n")
	}
	if r.Server != RedisServer {
		b.WriteString("NOTE: miniredis is not Redis: its rates say nothing about Redis; memory and script time are not available\n")
	}
	if len(r.Spread) > 0 {
		fmt.Fprintf(&b, "spread: each row one run on a namespace of its own of P partitions, every unit enqueued or submitted first,\n"+
			"then run by one worker in this process at concurrency %d (measured); no ceiling, no scenarios\n", SpreadConcurrency)
		if r.EventsOff {
			fmt.Fprintf(&b, "events off (--events-off)\n")
		}
		writeSpreadTable(&b, r.Spread)
		fmt.Fprintf(&b, "\nwall time %.1f s; the runs' namespaces deleted (%d keys left)\n", r.WallSeconds, r.KeysLeft)
		_, err := io.WriteString(w, b.String())
		return err
	}
	runs := make([]string, len(r.CeilingRunsPerS))
	for i, v := range r.CeilingRunsPerS {
		runs[i] = num(v)
	}
	fmt.Fprintf(&b, "ceiling: %s EVALSHA/s (trivial three-write script, %d parallel clients; before, after: %s)\n",
		num(r.CeilingPerS), r.CeilingClients, strings.Join(runs, ", "))
	fmt.Fprintf(&b, "commands counted by %s; round trips by a go-redis hook\n", r.CommandsSource)
	b.WriteString("server cpu = INFO cpu of the server while the jobs ran; worker cpu = the worker process's own user+system CPU then\n" +
		"(getrusage: this process for procs 1, the enqueue not included; the worker processes' sum for more); enq cpu = this process's while enqueuing\n\n")

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tconc\tprocs\tjobs\tjobs/s\t×ceiling\tcmds/job\ttrips/job\tscript µs/job\tserver cpu µs/job\tworker cpu µs/job\tenqueue/s\tenq ×ceil\tenq cmds/job\tenq trips/job\tenq cpu µs/job\tmemory\t")
	for _, s := range r.Scenarios {
		enq := "-\t-\t-\t-"
		if s.EnqueuePerS > 0 {
			enq = fmt.Sprintf("%s\t%.3f\t%.2f\t%.3f", num(s.EnqueuePerS), s.EnqueueCeilingRatio, s.EnqueueCommandsPerJob, s.EnqueueRoundTripsPerJob)
		}
		name := s.Name
		if s.Variant != "" {
			name += " " + s.Variant
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%.3f\t%.2f\t%.3f\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, s.Concurrency, s.Processes, s.Jobs,
			num(s.JobsPerS), s.CeilingRatio, s.CommandsPerJob, s.RoundTripsPerJob, micros(s.ServerUsPerJob),
			micros(s.ServerCPUUsPerJob), micros(s.WorkerCPUUsPerJob), enq, micros(s.ProducerCPUUsPerJob), memory(s))
	}
	_ = tw.Flush()
	for _, s := range r.Scenarios {
		switch s.Name {
		case ScenarioChain:
			fmt.Fprintf(&b, "\nchain: %d tasks, %s steps/s, promotion (handler return → next handler start) p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms\n",
				s.Jobs, num(s.StepsPerS), s.PromotionP50Ms, s.PromotionP90Ms, s.PromotionP99Ms, s.PromotionMaxMs)
		case ScenarioFanin:
			fmt.Fprintf(&b, "\nfanin: %d workflows of %d tasks, %s tasks/s (submitted at %s workflows/s)\n",
				s.Workflows, s.Jobs/max(s.Workflows, 1), num(s.TasksPerS), num(s.SubmitWorkflowsPerS))
		case ScenarioSubmit:
			script := "n/a"
			if s.ScriptMs != nil {
				script = fmt.Sprintf("%.1f ms", *s.ScriptMs)
			}
			fmt.Fprintf(&b, "\nsubmit: one %d-task DAG, submit call %.1f ms, script %s (%d script calls)\n", s.Jobs, s.SubmitMs, script, s.ScriptCalls)
		}
	}
	fmt.Fprintf(&b, "\nwall time %.1f s; namespace %s deleted (%d keys left)\n", r.WallSeconds, r.Namespace, r.KeysLeft)
	_, err := io.WriteString(w, b.String())
	return err
}

// micros formats a µs figure, "-" when there is none.
func micros(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
}

func memory(s Result) string {
	switch {
	case s.MemoryPerJobBytes != nil:
		return fmt.Sprintf("%s B/job", num(*s.MemoryPerJobBytes))
	case s.MemoryPerWorkflowBytes != nil:
		return fmt.Sprintf("%s B/workflow", num(*s.MemoryPerWorkflowBytes))
	}
	return "n/a"
}

// num formats a figure with thousands separators, no decimals.
func num(v float64) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := strconv.FormatInt(int64(v+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// ratio is a/b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
