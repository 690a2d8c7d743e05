package workflowfile

import (
	"encoding/json"
	"github.com/weirflow/weir"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/shell"
)

// The file's fields land in the plan as the spec says.
func TestParseToPlan(t *testing.T) {
	src := `id: photo-42
fail_fast: true
undo_on_cancel: false
tasks:
  - name: fetch
    run: ./fetch.sh
  - name: upload
    run: ./upload.sh
    queue: io
    after: [fetch]
    always: true
    retries: 2
    backoff: 250ms
    timeout: 30s
    undo:
      run: ./delete-upload.sh
  - name: notify
    run: echo hi
    after: [fetch, upload]
    undo:
      run: echo undo
      queue: slow
`
	lf, err := Parse("w.yaml", []byte(src), Options{Dir: "/data/flows"})
	if err != nil {
		t.Fatal(err)
	}
	p := lf.Plan
	if p.ID != "photo-42" || !p.FailFast || p.UndoOnCancel || len(p.Tasks) != 3 {
		t.Fatalf("plan %+v", p)
	}
	f, u, n := p.Tasks[0], p.Tasks[1], p.Tasks[2]
	if f.Queue != "default" || f.MaxAttempts != 1 || f.Backoff != 0 || f.Timeout != 0 || f.Undo != nil || f.Always || len(f.After) != 0 {
		t.Errorf("fetch %+v", f)
	}
	if u.Queue != "io" || u.MaxAttempts != 3 || u.Backoff != 250*time.Millisecond || u.Timeout != 30*time.Second || !u.Always ||
		strings.Join(u.After, ",") != "fetch" || u.Undo == nil || u.Undo.Queue != "io" {
		t.Errorf("upload %+v", u)
	}
	if n.Undo == nil || n.Undo.Queue != "slow" || strings.Join(n.After, ",") != "fetch,upload" {
		t.Errorf("notify %+v", n)
	}
	if got := strings.Join(lf.Queues, ","); got != "default,io,slow" {
		t.Errorf("queues %s", got)
	}
	pl, err := shell.Queue("io").DecodePayload(u.Payload)
	if err != nil || pl != (shell.Payload{Run: "./upload.sh", Dir: "/data/flows"}) {
		t.Errorf("upload payload %+v, %v", pl, err)
	}
	ul, err := shell.Queue("io").DecodePayload(u.Undo.Payload)
	if err != nil || ul.Run != "./delete-upload.sh" {
		t.Errorf("upload's undo payload %+v, %v", ul, err)
	}
	if err := engine.ValidatePlan(p, weir.DefaultLimits()); err != nil {
		t.Error(err)
	}

	// The same workflow in JSON gives the same plan.
	js := `{"id": "photo-42", "fail_fast": true, "undo_on_cancel": false, "tasks": [
  {"name": "fetch", "run": "./fetch.sh"},
  {"name": "upload", "run": "./upload.sh", "queue": "io", "after": ["fetch"], "always": true,
   "retries": 2, "backoff": "250ms", "timeout": "30s", "undo": {"run": "./delete-upload.sh"}},
  {"name": "notify", "run": "echo hi", "after": ["fetch", "upload"], "undo": {"run": "echo undo", "queue": "slow"}}]}`
	lj, err := Parse("w.json", []byte(js), Options{Dir: "/data/flows"})
	if err != nil {
		t.Fatal(err)
	}
	if engine.PlanHash(lj.Plan) != engine.PlanHash(p) {
		t.Errorf("the JSON file's plan differs from the YAML one:\n%+v\n%+v", lj.Plan, p)
	}
}

// A file without id gets a fresh valid one each time; undo_on_cancel
// defaults to true.
func TestParseDefaults(t *testing.T) {
	src := []byte("tasks:\n  - name: a\n    run: echo\n")
	a, err := Parse("a.yaml", src, Options{Dir: "/"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("a.yaml", src, Options{Dir: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if !engine.ValidID(a.Plan.ID) || a.Plan.ID == b.Plan.ID || !a.Plan.UndoOnCancel || a.Plan.FailFast {
		t.Errorf("defaults: %+v, %+v", a.Plan, b.Plan)
	}
}

// A stamp has exactly three fraction digits in UTC, whatever the time's
// zone and milliseconds, and reads back as the same instant.
func TestStamp(t *testing.T) {
	t.Parallel()
	zone := time.FixedZone("x", 5*3600)
	for in, want := range map[time.Time]string{
		time.UnixMilli(1_700_000_000_000):          "2023-11-14T22:13:20.000Z",
		time.UnixMilli(1_700_000_000_100).In(zone): "2023-11-14T22:13:20.100Z",
		time.UnixMilli(1_700_000_000_123):          "2023-11-14T22:13:20.123Z",
	} {
		b, err := json.Marshal(optTime(in))
		if err != nil || string(b) != `"`+want+`"` {
			t.Errorf("%v: %s %v, want %q", in, b, err, want)
		}
		var back Stamp
		if err := json.Unmarshal(b, &back); err != nil || !back.Equal(in) {
			t.Errorf("%s read back as %v %v", b, back, err)
		}
	}
	if b, _ := json.Marshal(Record{}); !strings.Contains(string(b), `"created_at":null`) {
		t.Errorf("a zero time is not null: %s", b)
	}
}
