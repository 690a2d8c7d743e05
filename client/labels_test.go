package client_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
)

// labelStores returns a new store of each kind: memstore of one and of
// three partitions, and the Redis store of one and of three partitions on
// each of redistest's servers (miniredis and, with WEIR_REDIS_URL, that
// server).
func labelStores(t *testing.T) map[string]client.Store {
	t.Helper()
	cfg3 := engine.DefaultConfig()
	cfg3.Partitions = 3
	out := map[string]client.Store{"memstore": memstore.New(), "memstore/3": memstore.New(memstore.WithConfig(cfg3))}
	for _, srv := range redistest.Servers(t) {
		rdb := redistest.Client(t, srv.Options)
		for _, parts := range []int{1, 3} {
			s, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(t, rdb, fmt.Sprintf("labels%d", parts)),
				Config: engine.Config{Partitions: parts}})
			if err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprintf("%s/%d", srv.Name, parts)] = s
		}
	}
	return out
}

var labelQ = client.NewQueue[string, string]("labelq")

// A workflow's name and labels, given at submit, come back from
// GetWorkflow and ListWorkflows, survive a re-run, and filter a listing:
// a name prefix, every label pair.
func TestWorkflowNameAndLabels(t *testing.T) {
	for name, store := range labelStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := client.New(store)
			submit := func(id, name string, labels map[string]string) {
				t.Helper()
				w := client.NewWorkflow(client.WorkflowID(id), client.WorkflowName(name), client.WorkflowLabels(labels))
				client.AddTask(w, "a", labelQ, "x")
				if err := c.Submit(ctx, w); err != nil {
					t.Fatal(err)
				}
			}
			submit("w1", "nightly-report", map[string]string{"team": "data", "env": "prod"})
			submit("w2", "nightly-backup", map[string]string{"team": "ops", "env": "prod"})
			submit("w3", "adhoc", map[string]string{"team": "data", "env": "dev"})
			submit("w4", "", nil)
			got, err := c.OpenWorkflow("w1").Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != "nightly-report" || !maps.Equal(got.Labels, map[string]string{"team": "data", "env": "prod"}) {
				t.Fatalf("GetWorkflow: name %q labels %v", got.Name, got.Labels)
			}
			if got, _ := c.OpenWorkflow("w4").Status(ctx); got.Name != "" || got.Labels != nil {
				t.Fatalf("GetWorkflow of none: name %q labels %v", got.Name, got.Labels)
			}
			ids := func(p weir.ListParams) string {
				t.Helper()
				var out []string
				for {
					pg, err := c.ListWorkflows(ctx, p)
					if err != nil {
						t.Fatal(err)
					}
					for _, w := range pg.Workflows {
						out = append(out, w.ID+"="+w.Name)
					}
					if pg.NextCursor == "" {
						return strings.Join(out, " ")
					}
					p.Cursor = pg.NextCursor
				}
			}
			for _, tc := range []struct {
				p    weir.ListParams
				want string
			}{
				{weir.ListParams{}, "w4= w3=adhoc w2=nightly-backup w1=nightly-report"},
				{weir.ListParams{Name: "nightly"}, "w2=nightly-backup w1=nightly-report"},
				{weir.ListParams{Name: "nightly-report"}, "w1=nightly-report"},
				{weir.ListParams{Name: "report"}, ""},
				{weir.ListParams{Labels: map[string]string{"team": "data"}}, "w3=adhoc w1=nightly-report"},
				{weir.ListParams{Labels: map[string]string{"team": "data", "env": "prod"}}, "w1=nightly-report"},
				{weir.ListParams{Name: "nightly", Labels: map[string]string{"env": "prod"}, Limit: 1}, "w2=nightly-backup w1=nightly-report"},
				{weir.ListParams{Labels: map[string]string{"team": ""}}, ""},
				{weir.ListParams{Name: "a", State: weir.WorkflowRunning}, "w3=adhoc"},
				{weir.ListParams{Name: "a", State: weir.WorkflowCompleted}, ""},
			} {
				if got := ids(tc.p); got != tc.want {
					t.Errorf("list %+v: %q, want %q", tc.p, got, tc.want)
				}
			}
			pg, err := c.ListWorkflows(ctx, weir.ListParams{Name: "nightly-r"})
			if err != nil || len(pg.Workflows) != 1 || !maps.Equal(pg.Workflows[0].Labels, map[string]string{"team": "data", "env": "prod"}) {
				t.Fatalf("listed labels: %+v %v", pg, err)
			}
			// a re-run keeps them
			w1 := c.OpenWorkflow("w1")
			if _, err := w1.Cancel(ctx, client.WithUndo(false)); err != nil {
				t.Fatal(err)
			}
			if _, err := w1.Rerun(ctx); err != nil {
				t.Fatal(err)
			}
			if got, _ := w1.Status(ctx); got.Run != 2 || got.Name != "nightly-report" || got.Labels["team"] != "data" {
				t.Fatalf("after a re-run: run %d name %q labels %v", got.Run, got.Name, got.Labels)
			}
		})
	}
}

// A name or labels out of bounds are refused at submit, and as a
// listing's filter, with an ErrInvalid that names the field.
func TestWorkflowNameAndLabelsRefused(t *testing.T) {
	many := map[string]string{}
	for i := range engine.MaxLabels + 1 {
		many[fmt.Sprintf("k%02d", i)] = "v"
	}
	cases := []struct {
		name   string
		labels map[string]string
		field  string
		says   string
	}{
		{strings.Repeat("n", engine.MaxWorkflowName+1), nil, "name", "longer than 128"},
		{"a\nb", nil, "name", "control character"},
		{"ok", map[string]string{"bad key": "v"}, "labels", "label key \"bad key\" must match"},
		{"ok", map[string]string{"k": strings.Repeat("v", engine.MaxLabelValue+1)}, "labels[k]", "longer than 128"},
		{"ok", many, "labels", "17 labels; a workflow carries at most 16"},
	}
	for name, store := range labelStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := client.New(store)
			for _, tc := range cases {
				w := client.NewWorkflow(client.WorkflowID("bad"), client.WorkflowName(tc.name), client.WorkflowLabels(tc.labels))
				client.AddTask(w, "a", labelQ, "x")
				for what, err := range map[string]error{
					"submit": c.Submit(ctx, w),
					"list": func() error {
						_, err := c.ListWorkflows(ctx, weir.ListParams{Name: tc.name, Labels: tc.labels})
						return err
					}(),
				} {
					var ve *weir.ValidationError
					if !errors.Is(err, weir.ErrInvalid) || !errors.As(err, &ve) || ve.Field != tc.field || !strings.Contains(err.Error(), tc.says) {
						t.Errorf("%s %.20q %d labels: %v, want ErrInvalid on %s saying %q", what, tc.name, len(tc.labels), err, tc.field, tc.says)
					}
				}
			}
			if _, err := c.OpenWorkflow("bad").Status(ctx); !errors.Is(err, weir.ErrNotFound) {
				t.Fatalf("a refused submit wrote: %v", err)
			}
		})
	}
}

// A filtered listing examines at most weir.ListScan workflows a call (per
// partition): past that many that do not match, its page is empty but has
// a cursor, and going on finds the match.
func TestFilteredListIsBounded(t *testing.T) {
	for name, store := range labelStores(t) {
		if strings.HasSuffix(name, "/3") {
			continue // one partition: the bound is exact
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := client.New(store)
			submit := func(id, name string) {
				t.Helper()
				w := client.NewWorkflow(client.WorkflowID(id), client.WorkflowName(name))
				client.AddTask(w, "a", labelQ, "x")
				if err := c.Submit(ctx, w); err != nil {
					t.Fatal(err)
				}
			}
			submit("a-match", "needle")
			for i := range weir.ListScan {
				submit(fmt.Sprintf("zz%04d", i), "hay")
			}
			pg, err := c.ListWorkflows(ctx, weir.ListParams{Name: "needle"})
			if err != nil {
				t.Fatal(err)
			}
			if len(pg.Workflows) != 0 || pg.NextCursor == "" {
				t.Fatalf("first call: %d workflows, cursor %q; want none and a cursor", len(pg.Workflows), pg.NextCursor)
			}
			pg, err = c.ListWorkflows(ctx, weir.ListParams{Name: "needle", Cursor: pg.NextCursor})
			if err != nil {
				t.Fatal(err)
			}
			if len(pg.Workflows) != 1 || pg.Workflows[0].ID != "a-match" || pg.NextCursor != "" {
				t.Fatalf("second call: %+v; want match and no cursor", pg)
			}
		})
	}
}
