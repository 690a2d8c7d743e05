package rest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/workflowfile"
)

// A submit's name and labels are in the workflow's record and filter the
// list (?name= a prefix, ?label=k=v every one); bad ones are refused with
// INVALID naming the field, at submit and in the list's query.
func TestWorkflowNameAndLabels(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": "w1", "name": "nightly-report", "labels": map[string]string{"team": "data", "env": "prod"}, "tasks": tasks(tk("a", "true"))})
	a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": "w2", "name": "nightly-backup", "labels": map[string]string{"team": "ops"}, "tasks": tasks(tk("a", "true"))})
	a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": "w3", "tasks": tasks(tk("a", "true"))})
	var rec workflowfile.Record
	if err := json.Unmarshal(a.want(http.StatusOK, "GET", "/v1/workflows/w1", nil).body, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Name == nil || *rec.Name != "nightly-report" || rec.Labels["team"] != "data" || rec.Labels["env"] != "prod" {
		t.Fatalf("record: name %v labels %v", rec.Name, rec.Labels)
	}
	if b := a.want(http.StatusOK, "GET", "/v1/workflows/w3", nil).body; !strings.Contains(string(b), `"name":null,"labels":{}`) {
		t.Fatalf("a record without a name and labels: %s", b)
	}
	ids := func(query string) string {
		t.Helper()
		var pg struct {
			Workflows []workflowfile.Record `json:"workflows"`
		}
		if err := json.Unmarshal(a.want(http.StatusOK, "GET", "/v1/workflows?"+query, nil).body, &pg); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, w := range pg.Workflows {
			out = append(out, w.ID)
		}
		return strings.Join(out, " ")
	}
	for q, want := range map[string]string{
		"name=nightly":                   "w2 w1",
		"name=nightly-r":                 "w1",
		"label=team%3Ddata":              "w1",
		"label=env=prod&label=team=data": "w1",
		"label=team=ops&name=nightly":    "w2",
		"label=team=nobody":              "",
		"id_prefix=w":                    "w3 w2 w1",
		"id_prefix=w2":                   "w2",
		"id_prefix=w&name=nightly-r":     "w1",
		"id_prefix=x":                    "",
	} {
		if got := ids(q); !equalSets(got, want) {
			t.Errorf("?%s: %q, want %q", q, got, want)
		}
	}
	for _, c := range []struct {
		body  wfFile
		field string
	}{
		{wfFile{"id": "bad1", "name": strings.Repeat("n", 129), "tasks": tasks(tk("a", "true"))}, "name"},
		{wfFile{"id": "bad2", "labels": map[string]string{"bad key": "v"}, "tasks": tasks(tk("a", "true"))}, "labels"},
	} {
		wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/workflows", c.body), "INVALID", c.field)
		a.want(http.StatusNotFound, "GET", "/v1/workflows/"+c.body["id"].(string), nil)
	}
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/workflows?label=nokey", nil), "INVALID", "label")
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/workflows?label=bad%20key=v", nil), "INVALID", "labels")
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/workflows?name="+strings.Repeat("n", 129), nil), "INVALID", "name")
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/workflows?id_prefix=w%2F1", nil), "INVALID", "id_prefix")
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/workflows?id_prefix="+strings.Repeat("w", 129), nil), "INVALID", "id_prefix")
}

// equalSets reports whether two space-separated lists hold the same words
// (the list is newest first; two submits may share a millisecond).
func equalSets(a, b string) bool {
	x, y := strings.Fields(a), strings.Fields(b)
	if len(x) != len(y) {
		return false
	}
	seen := map[string]int{}
	for _, s := range x {
		seen[s]++
	}
	for _, s := range y {
		if seen[s]--; seen[s] < 0 {
			return false
		}
	}
	return true
}
