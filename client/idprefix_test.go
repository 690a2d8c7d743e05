package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
)

// ListParams.IDPrefix keeps the workflows whose ID starts with it, in ID
// order, combined with State, Name and Labels; a workflow whose ID lacks
// it is not examined (not read at all by the Redis store, which reads its
// index of IDs from the prefix on), so that a prefix finds its match in
// one call past ListScan others.
func TestListByIDPrefix(t *testing.T) {
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
			// submitted in ID order, so that they list alike whether or not
			// two share a creation millisecond
			submit("order-1", "nightly", map[string]string{"team": "data"})
			submit("order-2", "adhoc", map[string]string{"team": "ops"})
			submit("order-20", "nightly", map[string]string{"team": "ops"})
			submit("invoice-1", "nightly", map[string]string{"team": "data"})
			submit("sched@17", "", nil)
			ids := func(p weir.ListParams) string {
				t.Helper()
				var out []string
				for {
					pg, err := c.ListWorkflows(ctx, p)
					if err != nil {
						t.Fatal(err)
					}
					for _, w := range pg.Workflows {
						out = append(out, w.ID)
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
				{weir.ListParams{IDPrefix: "order-"}, "order-1 order-2 order-20"},
				{weir.ListParams{IDPrefix: "order-2"}, "order-2 order-20"},
				{weir.ListParams{IDPrefix: "order-20"}, "order-20"},
				{weir.ListParams{IDPrefix: "order-200"}, ""},
				{weir.ListParams{IDPrefix: "sched@"}, "sched@17"},
				{weir.ListParams{IDPrefix: "order-", Limit: 1}, "order-1 order-2 order-20"},
				{weir.ListParams{IDPrefix: "order-", Name: "nightly"}, "order-1 order-20"},
				{weir.ListParams{IDPrefix: "order-", Labels: map[string]string{"team": "ops"}}, "order-2 order-20"},
				{weir.ListParams{IDPrefix: "order-", Name: "nightly", Labels: map[string]string{"team": "data"}}, "order-1"},
				{weir.ListParams{IDPrefix: "order-", State: weir.WorkflowRunning}, "order-1 order-2 order-20"},
				{weir.ListParams{IDPrefix: "order-", State: weir.WorkflowCompleted}, ""},
			} {
				if got := ids(tc.p); got != tc.want {
					t.Errorf("list %+v: %q, want %q", tc.p, got, tc.want)
				}
			}
			if strings.HasSuffix(name, "/3") {
				return // one partition: the bound is exact
			}
			for i := range weir.ListScan {
				submit(fmt.Sprintf("zz%04d", i), "", nil)
			}
			pg, err := c.ListWorkflows(ctx, weir.ListParams{IDPrefix: "invoice-"})
			if err != nil || len(pg.Workflows) != 1 || pg.Workflows[0].ID != "invoice-1" || pg.NextCursor != "" {
				t.Fatalf("past %d others: %+v %v; want invoice-1 in one call", weir.ListScan, pg, err)
			}
			pg, err = c.ListWorkflows(ctx, weir.ListParams{IDPrefix: "invoice-", Name: "nightly"})
			if err != nil || len(pg.Workflows) != 1 || pg.NextCursor != "" {
				t.Fatalf("with a name, past %d others: %+v %v", weir.ListScan, pg, err)
			}
		})
	}
}

// A bad ID prefix is refused with an ErrInvalid naming id_prefix.
func TestListByIDPrefixRefused(t *testing.T) {
	for name, store := range labelStores(t) {
		t.Run(name, func(t *testing.T) {
			c := client.New(store)
			for _, tc := range []struct{ prefix, says string }{
				{"a b", "holds a character no ID has"},
				{"a/b", "holds a character no ID has"},
				{strings.Repeat("a", 129), "longer than 128"},
			} {
				_, err := c.ListWorkflows(context.Background(), weir.ListParams{IDPrefix: tc.prefix})
				var ve *weir.ValidationError
				if !errors.Is(err, weir.ErrInvalid) || !errors.As(err, &ve) || ve.Field != "id_prefix" || !strings.Contains(err.Error(), tc.says) {
					t.Errorf("prefix %.20q: %v, want ErrInvalid on id_prefix saying %q", tc.prefix, err, tc.says)
				}
			}
		})
	}
}
