package main

import (
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
)

// The inspector's commands on a shared Redis: jobs of a queue by state,
// cancel-job (with its workflow's cascade), purge.
func TestInspectCommands(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	env := []string{"WEIR_REDIS_URL=redis://" + m.Addr()}
	ns := []string{"--namespace", "inspect"}
	cli := func(args ...string) result {
		t.Helper()
		return weir(t, "", env, append(args, ns...)...)
	}
	cli("pause", "default").WantCode(t, 0)
	var ids []string
	for range 2 {
		r := cli("submit", "examples/pipeline.yaml")
		r.WantCode(t, 0)
		ids = append(ids, strings.TrimSpace(r.Stdout))
	}

	// both roots wait in the queue, in claim order, one a page
	r := cli("jobs", "default", "--state", "ready", "--limit", "1")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, ids[0]+"/fetch") || strings.Contains(r.Stdout, ids[1]) {
		t.Errorf("first page:\n%s", r.Stdout)
	}
	_, cursor, ok := strings.Cut(r.Stdout, "more: --cursor ")
	if !ok {
		t.Fatalf("no cursor:\n%s", r.Stdout)
	}
	r = cli("jobs", "default", "--state", "ready", "--cursor", strings.TrimSpace(cursor))
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, ids[1]+"/fetch") || strings.Contains(r.Stdout, "more:") {
		t.Errorf("second page:\n%s", r.Stdout)
	}

	// cancelling a root cancels its dependents: all in the cancelled list
	r = cli("cancel-job", ids[0]+"/fetch")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "job "+ids[0]+"/fetch cancelled") || !strings.Contains(r.Stdout, "job "+ids[0]+"/report cancelled") {
		t.Errorf("cancel-job:\n%s", r.Stdout)
	}
	cli("cancel-job", ids[0]+"/fetch").WantCode(t, 1)
	cli("cancel-job", "nope").WantCode(t, 1)
	r = cli("jobs", "default", "--state", "cancelled")
	r.WantCode(t, 0)
	if n := strings.Count(r.Stdout, ids[0]+"/"); n != 5 || !strings.Contains(r.Stdout, "dependency fetch cancelled") {
		t.Errorf("cancelled list (%d of the workflow's jobs):\n%s", n, r.Stdout)
	}

	// purge cancels the other root
	r = cli("purge", "default")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "1 job(s) cancelled") {
		t.Errorf("purge: %s", r.Stdout)
	}
	r = cli("jobs", "default", "--state", "ready")
	r.WantCode(t, 0)
	if strings.Contains(r.Stdout, "/fetch") {
		t.Errorf("ready after purge:\n%s", r.Stdout)
	}
	cli("jobs", "default", "--state", "dead").WantCode(t, 2)
	cli("purge", "bad:name").WantCode(t, 2)
}
