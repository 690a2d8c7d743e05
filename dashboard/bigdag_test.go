package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"

	"github.com/weirflow/weir/engine"
)

// bigPlan is a workflow of 1,000 tasks: a chain of 4 (fetch, prep-1..3),
// 965 shards in parallel after it, a merge after all of them, and 10
// chains of 3 (deploy, verify, notify of a region) after the merge.
func bigPlan(id string) string {
	type task struct {
		Name  string   `json:"name"`
		Run   string   `json:"run"`
		After []string `json:"after,omitempty"`
	}
	ts := []task{{Name: "fetch", Run: "true"}}
	for i := 1; i <= 3; i++ {
		ts = append(ts, task{Name: fmt.Sprintf("prep-%d", i), Run: "true", After: []string{ts[len(ts)-1].Name}})
	}
	var shards []string
	for i := range 965 {
		n := fmt.Sprintf("shard-%03d", i)
		shards = append(shards, n)
		ts = append(ts, task{Name: n, Run: "true", After: []string{"prep-3"}})
	}
	ts = append(ts, task{Name: "merge", Run: "true", After: shards})
	for r := range 10 {
		d, v := fmt.Sprintf("deploy-%d", r), fmt.Sprintf("verify-%d", r)
		ts = append(ts, task{Name: d, Run: "true", After: []string{"merge"}},
			task{Name: v, Run: "true", After: []string{d}},
			task{Name: fmt.Sprintf("notify-%d", r), Run: "true", After: []string{v}})
	}
	b, err := json.Marshal(map[string]any{"id": id, "tasks": ts})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// drag presses the left mouse button at (x, y), moves the mouse by each
// of the offsets from there with the button held, and releases it at the
// last: the input events a mouse sends, through Input.dispatchMouseEvent.
func drag(x, y float64, by ...[2]float64) chromedp.Action[chromedp.Void] {
	at := func(typ input.DispatchMouseEventType, x, y float64, buttons int64) chromedp.Action[chromedp.Void] {
		return chromedp.MouseEvent(typ, x, y, func(p *input.DispatchMouseEventParams) {
			p.Button, p.Buttons, p.ClickCount = input.MouseButtonLeft, buttons, 1
		})
	}
	acts := []chromedp.Action[chromedp.Void]{at(chromedp.MouseMoved, x, y, 0), at(chromedp.MousePressed, x, y, 1)}
	for _, d := range by {
		acts = append(acts, at(chromedp.MouseMoved, x+d[0], y+d[1], 1))
	}
	last := by[len(by)-1]
	return chromedp.Steps(append(acts, at(chromedp.MouseReleased, x+last[0], y+last[1], 0))...)
}

// TestBrowserBigDAG: a workflow of 1,000 tasks, submitted to a real
// `weir dev` through its REST API and run by the test through dev's Redis
// (as a worker would: dev's own workers serve another queue), stays
// usable. Its graph is in a viewport of bounded height (not a page-long
// SVG) and opens collapsed (past 100 tasks: 13 nodes); the zoom buttons,
// the wheel, Fit and a drag (real mouse input) move the view; a group
// expands and collapses again; the find box expands a task's group, highlights the task and
// centres it in the viewport; with every task drawn, the live updates of
// tasks a worker runs repaint the nodes that changed and keep every node
// element (the same DOM nodes, not drawn again), the layout and the
// minimap. It logs
// the main-thread time the tab spends per update and per event: a
// benchmark figure (docs/benchmarks.md), not an assertion.
func TestBrowserBigDAG(t *testing.T) {
	d := startDev(t)
	b := newBrowser(t, 1280, 900)
	s := d.store // the test runs the tasks through dev's Redis, as a worker would
	submit(t, d.url, "application/json", bigPlan("big-1"))

	b.run(t, chromedp.Navigate(d.url+"/#token="+testToken), wait(`#workflow-table tr[data-workflow="big-1"]`))
	b.run(t, click(`tr[data-workflow="big-1"] a`), wait(`#dag-svg g.group-node[data-group="group:shard-000"][data-count="965"]`))

	// Bounded and collapsed.
	type box struct{ Viewport, SVG, Page float64 }
	sizes := evaluate[box](t, b, `({Viewport: document.getElementById('dag-viewport').getBoundingClientRect().height,
		SVG: document.getElementById('dag-svg').getBoundingClientRect().height, Page: document.documentElement.scrollHeight})`)
	if sizes.Viewport > 560 || sizes.SVG > 560 || sizes.Page > 6000 {
		t.Errorf("the graph's viewport is %.0f px high, its SVG %.0f px, the page %.0f px; want at most 560, 560 and 6000 (the table shows 100 tasks a page)", sizes.Viewport, sizes.SVG, sizes.Page)
	}
	count := func(sel string) int {
		t.Helper()
		q, _ := json.Marshal(sel)
		return evaluate[int](t, b, `document.querySelectorAll(`+string(q)+`).length`)
	}
	if n, g := count(`#dag-svg g.node`), count(`#dag-svg g.group-node`); n != 1 || g != 12 {
		t.Errorf("the 1,000-task graph opens with %d task nodes and %d group nodes, want 1 (merge) and 12 (the chain fetch..prep-3, the 965 shards, the 10 regions' chains)", n, g)
	}
	counts := evaluate[string](t, b, `document.querySelector('#dag-svg g.group-node[data-group="group:shard-000"]').dataset.counts`)
	if counts != "waiting:965" {
		t.Errorf("the shards' group counts %q, want waiting:965", counts)
	}
	if n := count(`#dag-svg g.group-node[data-group="chain:fetch"][data-count="4"][data-kind="chain"]`); n != 1 {
		t.Errorf("the chain fetch..prep-3 is drawn as %d group nodes of 4, want 1", n)
	}

	// Zoom (buttons, wheel), Fit, pan (a drag).
	type view struct{ K, X, Y, CX, CY float64 }
	readView := func() view {
		t.Helper()
		return evaluate[view](t, b, `(() => {
			const m = document.querySelector('#dag-svg g.scene').transform.baseVal.consolidate().matrix;
			const r = document.getElementById('dag-viewport').getBoundingClientRect();
			return {K: m.a, X: m.e, Y: m.f, CX: r.left + r.width / 2, CY: r.top + r.height / 2};
		})()`)
	}
	fitted := readView()
	b.run(t, click(`#dag-zoom-in`))
	if v := readView(); math.Abs(v.K-fitted.K*1.25) > 1e-3 {
		t.Errorf("+ zoomed from %.4f to %.4f, want ×1.25", fitted.K, v.K)
	}
	b.run(t, click(`#dag-fit`))
	if v := readView(); math.Abs(v.K-fitted.K) > 1e-3 || math.Abs(v.X-fitted.X) > 0.5 || math.Abs(v.Y-fitted.Y) > 0.5 {
		t.Errorf("Fit shows %+v, want the fitted view %+v again", v, fitted)
	}
	b.run(t, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseWheel, fitted.CX, fitted.CY, func(p *input.DispatchMouseEventParams) { p.DeltaX, p.DeltaY = 0.001, -200 })) // deltaX: the protocol wants both, and a zero is left out
	if v := readView(); v.K <= fitted.K*1.1 {
		t.Errorf("a wheel turn up zoomed from %.4f to %.4f, want closer", fitted.K, v.K)
	}
	// a drag: the mouse input a user gives, from the viewport's centre
	// by (30, 10) then (60, 20) px
	b.run(t, click(`#dag-fit`), drag(fitted.CX, fitted.CY, [2]float64{30, 10}, [2]float64{60, 20}))
	if v := readView(); math.Abs(v.X-fitted.X-60) > 0.5 || math.Abs(v.Y-fitted.Y-20) > 0.5 || v.K != fitted.K {
		t.Errorf("a drag of (60, 20) px moved the view from %+v to %+v, want it panned by (60, 20)", fitted, v)
	}
	b.run(t, click(`#dag-fit`))

	// Expand the shards, collapse them again.
	b.run(t, click(`#dag-svg g.group-node[data-group="group:shard-000"]`), wait(`#dag-svg g.node[data-task="shard-964"]`))
	if n, g := count(`#dag-svg g.node`), count(`#dag-svg g.group-node`); n != 966 || g != 11 {
		t.Errorf("after expanding the shards: %d task nodes and %d group nodes, want 966 and 11", n, g)
	}
	b.run(t, click(`#dag-svg g.group-frame[data-group="group:shard-000"] .collapse`), wait(`#dag-svg g.group-node[data-group="group:shard-000"]`))
	if n := count(`#dag-svg g.node`); n != 1 {
		t.Errorf("after collapsing the shards again: %d task nodes, want 1", n)
	}

	// Find a task: its group expands, it is highlighted and centred.
	b.run(t, chromedp.Evaluate[chromedp.Void](`document.getElementById('dag-find').value = 'shard-500'; document.querySelector('form.dag-find').requestSubmit()`),
		wait(`#dag-svg g.node.found[data-task="shard-500"]`))
	type offset struct{ DX, DY, Zoom float64 }
	off := evaluate[offset](t, b, `(() => {
		const v = document.getElementById('dag-viewport').getBoundingClientRect();
		const n = document.querySelector('#dag-svg g.node[data-task="shard-500"] rect.box').getBoundingClientRect();
		return {DX: (n.left + n.width / 2) - (v.left + v.width / 2), DY: (n.top + n.height / 2) - (v.top + v.height / 2),
			Zoom: Number(document.getElementById('dag').dataset.zoom)};
	})()`)
	if off.DX*off.DX+off.DY*off.DY > 4 || off.Zoom < 1 {
		t.Errorf("the task found is %.1f, %.1f px from the viewport's centre at zoom %.2f; want centred at 1:1 or closer", off.DX, off.DY, off.Zoom)
	}
	if n := count(`#dag-svg g.node.found`); n != 1 {
		t.Errorf("%d nodes are highlighted, want 1", n)
	}

	// Follow a worker, collapsed (as the page opens) then with every
	// task drawn. What a DevTools client adds to the tab's work (chromedp
	// enables the DOM and CSS domains, which then report each change of
	// the page to it) is not the page's: they are switched off from here,
	// and the test waits for what the page shows with Runtime.evaluate,
	// every 20 ms, instead of a DOM query.
	b.run(t, click(`#dag-collapse-all`), wait(`#dag-svg g.group-node[data-group="group:shard-000"]`))
	ctx := context.Background()
	claimOne := func(name string) engine.Claimed {
		t.Helper()
		cs, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"default"}, Max: 1, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 1 || cs[0].Job.ID != "big-1/"+name {
			t.Fatalf("claimed %d jobs (%v), want big-1/%s", len(cs), cs, name)
		}
		return cs[0]
	}
	for _, n := range []string{"fetch", "prep-1", "prep-2", "prep-3"} {
		finish(t, s, claimOne(n), "", "")
	}
	b.run(t, wait(`#dag-svg g.group-node[data-group="group:shard-000"][data-counts="queued:965"]`), wait(`#live[data-mode="live"]`))
	for _, cmd := range []cdp.Command[cdp.Empty, cdp.Empty]{css.Disable, dom.Disable} {
		if _, err := chromedp.Call(b.ctx, cmd, cdp.Empty{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := chromedp.Call(b.ctx, performance.Enable, performance.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	shows := func(expr string) {
		t.Helper()
		for !evaluate[bool](t, b, expr) {
			select {
			case <-b.ctx.Done():
				t.Fatalf("the page never showed %s: %v", expr, b.ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	// measure runs the shards from..to-1, one at a time (claimed, then
	// completed: two updates each), each seen on the page (by shown)
	// before the next, and logs the tab's main-thread time per update.
	measure := func(what string, from, to int, shown func(task, state string, done int) string) {
		t.Helper()
		type metrics struct{ Task, Script, Layout, Wall, Events float64 }
		read := func() metrics {
			res, err := chromedp.Call(b.ctx, performance.GetMetrics, cdp.Empty{})
			if err != nil {
				t.Fatal(err)
			}
			var m metrics
			for _, x := range res.Metrics {
				switch x.Name {
				case "TaskDuration":
					m.Task = x.Value
				case "ScriptDuration":
					m.Script = x.Value
				case "LayoutDuration":
					m.Layout = x.Value
				case "Timestamp":
					m.Wall = x.Value
				}
			}
			m.Events = evaluate[float64](t, b, `Number(document.getElementById('live').dataset.events || 0)`)
			return m
		}
		m0 := read()
		for i := from; i < to; i++ {
			n := fmt.Sprintf("shard-%03d", i)
			c := claimOne(n)
			shows(shown(n, "running", i))
			finish(t, s, c, "", "")
			shows(shown(n, "completed", i+1))
		}
		m1 := read()
		u := float64(2 * (to - from))
		t.Logf("bench: 1,000-task workflow, %s: %d updates (%d tasks run, %.0f events) in %.1f s: main thread %.1f ms per update (script %.1f ms, layout %.1f ms), %.1f ms per event, busy %.0f%% of the time; GOMAXPROCS %d",
			what, int(u), to-from, m1.Events-m0.Events, m1.Wall-m0.Wall, (m1.Task-m0.Task)*1000/u, (m1.Script-m0.Script)*1000/u, (m1.Layout-m0.Layout)*1000/u,
			(m1.Task-m0.Task)*1000/max(m1.Events-m0.Events, 1), 100*(m1.Task-m0.Task)/(m1.Wall-m0.Wall), runtime.GOMAXPROCS(0))
	}
	const shards = 10
	measure("collapsed (13 nodes)", 0, shards, func(task, state string, done int) string {
		var want string
		switch {
		case state == "completed":
			want = fmt.Sprintf("queued:%d completed:%d", 965-done, done)
		case done == 0:
			want = "queued:964 running:1"
		default:
			want = fmt.Sprintf("queued:%d running:1 completed:%d", 965-done-1, done)
		}
		return `document.querySelector('#dag-svg g.group-node[data-group="group:shard-000"][data-counts="` + want + `"]') !== null`
	})

	// Every task drawn; tag each node element, then follow the worker.
	b.run(t, chromedp.Evaluate[chromedp.Void](`document.getElementById('dag-expand-all').click()`))
	shows(`document.querySelectorAll('#dag-svg g.node').length === 1000`)
	b.run(t, chromedp.Evaluate[chromedp.Void](`window.tagged = new Map([...document.querySelectorAll('#dag-svg g.node')].map(g => [g.dataset.task, g]));
		window.layouts = document.getElementById('dag').dataset.layouts; window.minimaps = document.getElementById('dag').dataset.minimaps`))
	measure("every node drawn (1,000 nodes)", shards, 2*shards, func(task, state string, _ int) string {
		return `document.querySelector('#dag-svg g.node[data-task="` + task + `"][data-state="` + state + `"]') !== null`
	})

	same := evaluate[[]string](t, b, `[...window.tagged].filter(([name, g]) => document.querySelector('#dag-svg g.node[data-task="' + name + '"]') !== g).map(([name]) => name)`)
	if len(same) != 0 {
		t.Errorf("%d node elements were drawn again by the live updates (%v ...), want none: only their classes and text change", len(same), same[:min(len(same), 5)])
	}
	if l, want := evaluate[string](t, b, `document.getElementById('dag').dataset.layouts`), evaluate[string](t, b, `window.layouts`); l != want {
		t.Errorf("the live updates laid the graph out again (%s layouts, %s before)", l, want)
	}
	if m, want := evaluate[string](t, b, `document.getElementById('dag').dataset.minimaps`), evaluate[string](t, b, `window.minimaps`); m != want {
		t.Errorf("the live updates drew the minimap again (%s draws, %s before)", m, want)
	}
	if st := evaluate[string](t, b, `window.tagged.get('shard-013').dataset.state + ' ' + window.tagged.get('shard-100').dataset.state`); st != "completed queued" {
		t.Errorf("the tagged nodes of shard-013 and shard-100 say %q, want completed queued", st)
	}
	if p := b.reported(); len(p) > 0 {
		t.Errorf("the page reported problems: %q", p)
	}
}
