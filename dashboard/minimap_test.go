package dashboard_test

import (
	"math"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/weirflow/weir/engine"
)

// TestBrowserMinimapAndFilter: a workflow of 1,000 tasks (bigPlan) on a
// real `weir dev`, its tasks run by the test through dev's Redis (a few
// ended, one running, one failed: merge and the regions' chains after it
// are cancelled). Its graph, collapsed, has a minimap
// with a box per node; a click on the minimap (real mouse input) centres
// the view on the point clicked, a drag on it follows the pointer, and
// the minimap's rectangle is the viewport's. The filter by state counts
// each state's tasks, and highlights the tasks of the states chosen:
// collapsed, the group holding them is not dimmed and says how many it
// holds, the other nodes (and their minimap boxes) are; expanded, exactly
// the tasks in those states are not dimmed; a live update dims a task
// that left them without drawing the minimap again; All clears it.
func TestBrowserMinimapAndFilter(t *testing.T) {
	d := startDev(t)
	b := newBrowser(t, 1280, 900)
	submit(t, d.url, "application/json", bigPlan("big-2"))
	claimed := func(name string) engine.Claimed {
		t.Helper()
		c := d.claimOne(t, "default")
		if c.Job.ID != "big-2/"+name {
			t.Fatalf("claimed %s, want big-2/%s", c.Job.ID, name)
		}
		return c
	}
	for _, n := range []string{"fetch", "prep-1", "prep-2", "prep-3"} {
		d.settle(t, claimed(n), engine.OutcomeCompleted)
	}
	running := claimed("shard-000")
	d.settle(t, claimed("shard-001"), engine.OutcomeFailed)
	d.settle(t, claimed("shard-002"), engine.OutcomeCompleted)

	b.run(t, chromedp.Navigate(d.url+"/#token="+testToken), wait(`#workflow-table tr[data-workflow="big-2"]`))
	b.run(t, click(`tr[data-workflow="big-2"] a`),
		wait(`#dag-svg g.group-node[data-group="group:shard-000"][data-counts="queued:962 running:1 completed:1 failed:1"]`),
		wait(`#live[data-mode="live"]`))
	count := func(sel string) int {
		t.Helper()
		return evaluate[int](t, b, `document.querySelectorAll(`+jsString(sel)+`).length`)
	}

	// The minimap: shown (the graph does not fit at 1:1), a box per node.
	if hidden := evaluate[bool](t, b, `document.getElementById('dag-minimap').hidden`); hidden {
		t.Fatal("the 1,000-task graph has no minimap shown")
	}
	if n, g := count(`#dag-minimap rect[data-task]`), count(`#dag-minimap rect[data-group]`); n != 1 || g != 12 {
		t.Errorf("the minimap has %d task boxes and %d group boxes, want 1 and 12 (the nodes drawn)", n, g)
	}
	type view struct{ K, X, Y, GX, GY, MX, MY, MW, MH float64 }
	// readView reads the view's transform, the point of the graph at the
	// viewport's centre, and the minimap's rectangle
	readView := func() view {
		t.Helper()
		return evaluate[view](t, b, `(() => {
			const m = document.querySelector('#dag-svg g.scene').transform.baseVal.consolidate().matrix;
			const vp = document.getElementById('dag-viewport');
			const r = document.getElementById('dag-minimap-view');
			return {K: m.a, X: m.e, Y: m.f, GX: (vp.clientWidth / 2 - m.e) / m.a, GY: (vp.clientHeight / 2 - m.f) / m.a,
				MX: Number(r.getAttribute('x')), MY: Number(r.getAttribute('y')), MW: Number(r.getAttribute('width')), MH: Number(r.getAttribute('height'))};
		})()`)
	}
	type point struct{ CX, CY, GX, GY float64 }
	// box is where a node's minimap box is: its centre on the screen and
	// in the graph's coordinates
	box := func(sel string) point {
		t.Helper()
		return evaluate[point](t, b, `(() => {
			const e = document.querySelector(`+jsString(sel)+`), r = e.getBoundingClientRect();
			const x = Number(e.getAttribute('x')), y = Number(e.getAttribute('y')), w = Number(e.getAttribute('width')), h = Number(e.getAttribute('height'));
			return {CX: r.left + r.width / 2, CY: r.top + r.height / 2, GX: x + w / 2, GY: y + h / 2};
		})()`)
	}
	near := func(what string, v view, p point) {
		t.Helper()
		// one screen pixel of the minimap is about 5 of the graph
		if d := math.Hypot(v.GX-p.GX, v.GY-p.GY); d > 8 {
			t.Errorf("%s: the view is centred on (%.0f, %.0f) of the graph, %.0f px from the point (%.0f, %.0f), want it there", what, v.GX, v.GY, d, p.GX, p.GY)
		}
		if vp := evaluate[[2]float64](t, b, `[document.getElementById('dag-viewport').clientWidth, document.getElementById('dag-viewport').clientHeight]`); math.Abs(v.MX+v.X/v.K) > 0.2 || math.Abs(v.MY+v.Y/v.K) > 0.2 ||
			math.Abs(v.MW-vp[0]/v.K) > 0.2 || math.Abs(v.MH-vp[1]/v.K) > 0.2 {
			t.Errorf("%s: the minimap's rectangle is (%.1f, %.1f) %.1f×%.1f, not the viewport's (%.1f, %.1f) %.1f×%.1f", what, v.MX, v.MY, v.MW, v.MH, -v.X/v.K, -v.Y/v.K, vp[0]/v.K, vp[1]/v.K)
		}
	}
	// zoomed in past 1:1, the view shows a part of the graph; the page
	// scrolled to show the whole viewport
	b.run(t, click(`#dag-one`), click(`#dag-zoom-in`), click(`#dag-zoom-in`),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('dag-viewport').scrollIntoView({block: 'center'})`))
	before := readView()
	last := box(`#dag-minimap rect[data-group="chain:deploy-9"]`)
	if d := math.Hypot(before.GX-last.GX, before.GY-last.GY); d < 100 {
		t.Fatalf("the view is centred %.0f px from deploy-9's chain already; the test wants it far", d)
	}
	b.run(t, chromedp.MouseClickXY(last.CX, last.CY))
	after := readView()
	if after.K != before.K {
		t.Errorf("a click on the minimap zoomed from %.4f to %.4f, want the zoom kept", before.K, after.K)
	}
	near("a click on deploy-9's chain in the minimap", after, last)
	// a drag from there to the chain fetch..prep-3: the view follows
	first := box(`#dag-minimap rect[data-group="chain:fetch"]`)
	b.run(t, drag(last.CX, last.CY, [2]float64{(first.CX - last.CX) / 2, (first.CY - last.CY) / 2}, [2]float64{first.CX - last.CX, first.CY - last.CY}))
	near("a drag on the minimap to the chain fetch..prep-3", readView(), first)

	// The filter: counts, then failed highlighted, collapsed.
	counts := evaluate[[]string](t, b, `[...document.querySelectorAll('#dag-filter button.filter-state')].map(e => e.dataset.state + ' ' + e.dataset.count)`)
	if want := []string{"waiting 0", "pending 0", "queued 962", "open 0", "running 1", "completed 5", "failed 1", "cancelled 31"}; !slices.Equal(counts, want) {
		t.Errorf("the filter's counts are %q, want %q", counts, want)
	}
	b.run(t, click(`#dag-filter button[data-state="failed"]`), wait(`#dag[data-filter="failed"]`))
	if m := evaluate[string](t, b, `document.querySelector('#dag-svg g.group-node[data-group="group:shard-000"]').dataset.matches`); m != "1" ||
		count(`#dag-svg g.group-node[data-group="group:shard-000"].dimmed`) != 0 {
		t.Errorf("with failed highlighted, the shards' group has %q tasks matching (dimmed: %d), want 1, not dimmed", m, count(`#dag-svg g.group-node[data-group="group:shard-000"].dimmed`))
	}
	if g, n, mini := count(`#dag-svg g.group-node.dimmed`), count(`#dag-svg g.node.dimmed`), count(`#dag-minimap rect.dimmed`); g != 11 || n != 1 || mini != 12 {
		t.Errorf("with failed highlighted: %d group nodes, %d task nodes and %d minimap boxes dimmed, want 11, 1 (merge) and 12", g, n, mini)
	}
	if s := evaluate[string](t, b, `document.getElementById('dag-filter-status').textContent`); s != "1 of 1000 tasks" {
		t.Errorf("the filter says %q, want \"1 of 1000 tasks\"", s)
	}
	// failed and running, the shards expanded: exactly those two are not dimmed
	b.run(t, click(`#dag-filter button[data-state="running"]`), wait(`#dag-svg g.group-node[data-group="group:shard-000"][data-matches="2"]`))
	b.run(t, click(`#dag-svg g.group-node[data-group="group:shard-000"]`), wait(`#dag-svg g.node[data-task="shard-964"]`))
	lit := evaluate[[]string](t, b, `[...document.querySelectorAll('#dag-svg g.node:not(.dimmed)')].map(g => g.dataset.task + ' ' + g.dataset.state).sort()`)
	if want := []string{"shard-000 running", "shard-001 failed"}; !slices.Equal(lit, want) {
		t.Errorf("with failed and running highlighted, the nodes not dimmed are %q, want %q", lit, want)
	}
	if n := count(`#dag-svg g.node.dimmed`); n != 964 {
		t.Errorf("%d task nodes dimmed, want 964 (the other shards and merge)", n)
	}
	// a live update: shard-000 completes, and is dimmed; the minimap is
	// not drawn again
	draws := evaluate[string](t, b, `document.getElementById('dag').dataset.minimaps`)
	d.settle(t, running, engine.OutcomeCompleted)
	b.run(t, wait(`#dag-svg g.node.dimmed[data-task="shard-000"][data-state="completed"]`), wait(`#dag-minimap rect.dimmed.st-completed[data-task="shard-000"]`))
	if s := evaluate[string](t, b, `document.getElementById('dag-filter-status').textContent`); s != "1 of 1000 tasks" {
		t.Errorf("after shard-000 completed the filter says %q, want \"1 of 1000 tasks\"", s)
	}
	if now := evaluate[string](t, b, `document.getElementById('dag').dataset.minimaps`); now != draws {
		t.Errorf("a live update drew the minimap again (%s draws, %s before)", now, draws)
	}
	// All: nothing dimmed
	b.run(t, click(`#dag-filter-clear`), wait(`#dag[data-filter=""]`))
	if n := count(`#dag-svg .dimmed, #dag-minimap .dimmed`); n != 0 {
		t.Errorf("after All, %d elements are dimmed, want none", n)
	}
	if p := b.reported(); len(p) > 0 {
		t.Errorf("the page reported problems: %q", p)
	}
}
