package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/worker"
)

// chain runs one workflow of n sequential no-op tasks at concurrency 1 and
// measures the promotion latency: from a task's handler returning to the
// next task's handler starting.
func (r *runner) chain(ctx context.Context, n int) (Result, error) {
	res := Result{Name: ScenarioChain, Concurrency: 1, Processes: 1, Jobs: n, Workflows: 1}
	q := noopQueue("chain")
	starts, ends := make([]atomic.Int64, n), make([]atomic.Int64, n)
	p := newProgress(worker.EventWorkflowEnded, 1)
	w := worker.New(r.store, worker.Config{Concurrency: 1, Observer: p.observe,
		Logger: discardLogger, ShutdownTimeout: 10 * time.Second, FinishCalls: r.finishCalls()})
	worker.Handle(w, q, func(ctx context.Context, j *worker.Job[empty]) (empty, error) {
		i, err := strconv.Atoi(j.Task[1:])
		if err != nil || i < 0 || i >= n {
			return empty{}, worker.NonRetryable(fmt.Errorf("bench: unexpected task %q", j.Task))
		}
		starts[i].Store(time.Now().UnixNano())
		ends[i].Store(time.Now().UnixNano())
		return empty{}, nil
	})
	wf := chainWorkflow(q, n)
	a, err := r.snap(ctx, true)
	if err != nil {
		return res, err
	}
	// Submitted before the worker starts, so that the worker's CPU is
	// measured alone (the steps and their latencies run from the first
	// handler's start either way).
	if err := r.client.Submit(ctx, wf); err != nil {
		return res, fmt.Errorf("submit: %w", err)
	}
	cpu := r.startCPU()
	var b snapshot // taken while the worker still runs
	if err := p.runUntil(ctx, w, func() (err error) {
		res.WorkerCPUUsPerJob = cpu.usPer(n)
		b, err = r.snap(ctx, true)
		return err
	}); err != nil {
		return res, err
	}
	lat := make([]float64, 0, n-1)
	for i := 1; i < n; i++ {
		s, e := starts[i].Load(), ends[i-1].Load()
		if s == 0 || e == 0 {
			return res, fmt.Errorf("task t%d or t%d never ran", i-1, i)
		}
		lat = append(lat, float64(s-e)/1e6)
	}
	first, last := starts[0].Load(), ends[n-1].Load()
	res.Seconds = time.Duration(last - first).Seconds()
	res.StepsPerS = float64(n) / res.Seconds
	res.JobsPerS = res.StepsPerS
	slices.Sort(lat)
	res.PromotionP50Ms = percentile(lat, 50)
	res.PromotionP90Ms = percentile(lat, 90)
	res.PromotionP99Ms = percentile(lat, 99)
	res.PromotionMaxMs = percentile(lat, 100)
	res.CommandsPerJob, res.RoundTripsPerJob = perJob(a, b, n)
	res.MemoryPerWorkflowBytes = memPer(a, b, 1)
	res.ServerCPUUsPerJob = serverCPUPer(a, b, n)
	return res, nil
}

// percentile is the nearest-rank percentile of sorted values (0 for none).
func percentile(sorted []float64, pct float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(pct/100*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// fanin submits wfs workflows of width parallel no-op tasks joined by one,
// from the Producers in parallel, then runs them with one worker at
// concurrency conc.
func (r *runner) fanin(ctx context.Context, wfs, width, conc int) (Result, error) {
	tasks := wfs * (width + 1)
	res := Result{Name: ScenarioFanin, Concurrency: conc, Processes: 1, Jobs: tasks, Workflows: wfs}
	q := noopQueue("fanin")
	cpu := r.startCPU()
	a, err := r.snap(ctx, true)
	if err != nil {
		return res, err
	}
	err = r.produce(ctx, wfs, func(int) error { return r.client.Submit(ctx, faninWorkflow(q, width)) })
	submitted := time.Now()
	res.ProducerCPUUsPerJob = cpu.usPer(tasks)
	if err != nil {
		return res, err
	}
	res.SubmitWorkflowsPerS = float64(wfs) / submitted.Sub(a.at).Seconds()
	p := newProgress(worker.EventWorkflowEnded, wfs)
	w := worker.New(r.store, worker.Config{Concurrency: conc, Observer: p.observe,
		Logger: discardLogger, ShutdownTimeout: 10 * time.Second, FinishCalls: r.finishCalls()})
	worker.Handle(w, q, noop)
	cpu = r.startCPU()
	started, err := r.snap(ctx, false)
	if err != nil {
		return res, err
	}
	start := time.Now()
	var ran snapshot
	if err := p.runUntil(ctx, w, func() (err error) {
		res.WorkerCPUUsPerJob = cpu.usPer(tasks)
		ran, err = r.snap(ctx, false)
		return err
	}); err != nil {
		return res, err
	}
	b, err := r.snap(ctx, true)
	if err != nil {
		return res, err
	}
	res.Seconds = p.lastTime().Sub(start).Seconds()
	res.TasksPerS = float64(tasks) / res.Seconds
	res.JobsPerS = res.TasksPerS
	res.CommandsPerJob, res.RoundTripsPerJob = perJob(a, b, tasks)
	res.MemoryPerWorkflowBytes = memPer(a, b, wfs)
	res.ServerCPUUsPerJob = serverCPUPer(started, ran, tasks)
	return res, nil
}

// submitLayer is the width of the submitted DAG's layers.
const submitLayer = 100

// submit submits one DAG of n no-op tasks: layers of 100 tasks, each task
// after two tasks of the layer before. Nothing runs it.
func (r *runner) submit(ctx context.Context, n int) (Result, error) {
	res := Result{Name: ScenarioSubmit, Concurrency: 1, Processes: 1, Jobs: n, Workflows: 1}
	q := noopQueue("submit")
	wf := client.NewWorkflow()
	ts := make([]*client.Task[empty], n)
	for i := range n {
		ts[i] = client.AddTask(wf, "t"+strconv.Itoa(i), q, empty{})
		if i >= submitLayer {
			base := i - i%submitLayer - submitLayer
			ts[i].After(ts[base+i%submitLayer], ts[base+(i+1)%submitLayer])
		}
	}
	a, err := r.snap(ctx, true)
	if err != nil {
		return res, err
	}
	t0 := time.Now()
	if err := r.client.Submit(ctx, wf); err != nil {
		return res, fmt.Errorf("submit: %w", err)
	}
	d := time.Since(t0)
	b, err := r.snap(ctx, true)
	if err != nil {
		return res, err
	}
	st, err := r.client.OpenWorkflow(wf.ID()).Status(ctx)
	if err != nil {
		return res, err
	}
	if len(st.Tasks) != n {
		return res, fmt.Errorf("submitted workflow has %d tasks, want %d", len(st.Tasks), n)
	}
	res.Seconds = d.Seconds()
	res.SubmitMs = d.Seconds() * 1000
	res.JobsPerS = float64(n) / res.Seconds
	res.CommandsPerJob, res.RoundTripsPerJob = perJob(a, b, n)
	res.MemoryPerWorkflowBytes = memPer(a, b, 1)
	res.ScriptCalls = b.cmds.scriptCall - a.cmds.scriptCall
	if !r.srv.lite {
		ms := float64(b.cmds.scriptUsec-a.cmds.scriptUsec) / 1000
		res.ScriptMs = &ms
	}
	return res, nil
}

// chainWorkflow is a workflow of n tasks on q, t0 to t<n-1>, each after
// the one before.
func chainWorkflow(q client.Queue[empty, empty], n int) *client.Workflow {
	wf := client.NewWorkflow()
	var prev *client.Task[empty]
	for i := range n {
		t := client.AddTask(wf, "t"+strconv.Itoa(i), q, empty{})
		if prev != nil {
			t.After(prev)
		}
		prev = t
	}
	return wf
}

// faninWorkflow is a workflow of width parallel tasks on q joined by one
// more.
func faninWorkflow(q client.Queue[empty, empty], width int) *client.Workflow {
	wf := client.NewWorkflow()
	refs := make([]client.TaskRef, width)
	for i := range width {
		refs[i] = client.AddTask(wf, "p"+strconv.Itoa(i), q, empty{})
	}
	client.AddTask(wf, "join", q, empty{}).After(refs...)
	return wf
}
