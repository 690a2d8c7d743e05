package rest

import (
	"fmt"
	"github.com/weirflow/weir"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
)

// The schedule routes: put (created, then replaced), get, list, pause,
// resume, delete, with the errors spec/rest.md lists.
func TestScheduleRoutes(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	r := a.want(http.StatusCreated, "PUT", "/v1/schedules/report",
		`{"cron":"0 30 2 * * *","tz":"Europe/Paris","overlap":"skip","job":{"queue":"reports","payload":{"kind":"daily"},"max_attempts":3}}`)
	if r.header.Get("Location") != "/v1/schedules/report" {
		t.Errorf("Location %q", r.header.Get("Location"))
	}
	rec := strict[ScheduleRecord](t, r.body)
	if rec.Name != "report" || rec.Cron != "0 30 2 * * *" || rec.TZ != "Europe/Paris" || rec.Overlap != "skip" || rec.Missed != "skip" ||
		rec.Job == nil || rec.Job.Queue != "reports" || fmt.Sprint(rec.Job.Payload) != "map[kind:daily]" || rec.Job.MaxAttempts != 3 ||
		rec.Rev != 1 || rec.Paused || rec.Next == nil || rec.LastTick != nil {
		t.Fatalf("created record %+v", rec)
	}
	if h := rec.Next.Time.UTC(); h.Second() != 0 || (h.Hour() != 0 && h.Hour() != 1) || h.Minute() != 30 {
		t.Errorf("next tick %v is not 02:30 in Paris", rec.Next)
	}

	wf := `{"every":"1h","missed":"once","workflow":{"tasks":[{"name":"a","run":"true"},{"name":"b","run":"true","after":["a"]}]}}`
	rec = strict[ScheduleRecord](t, a.want(http.StatusCreated, "PUT", "/v1/schedules/etl", wf).body)
	if rec.Every != "1h0m0s" || rec.Missed != "once" || len(rec.Tasks) != 2 || rec.Job != nil {
		t.Fatalf("workflow schedule %+v", rec)
	}
	rec = strict[ScheduleRecord](t, a.want(http.StatusOK, "PUT", "/v1/schedules/etl", wf).body)
	if rec.Rev != 2 {
		t.Errorf("replaced: rev %d", rec.Rev)
	}

	list := strict[struct {
		Schedules []ScheduleRecord `json:"schedules"`
	}](t, a.want(http.StatusOK, "GET", "/v1/schedules", nil).body)
	if len(list.Schedules) != 2 || list.Schedules[0].Name != "etl" || list.Schedules[1].Name != "report" {
		t.Fatalf("list %+v", list)
	}

	a.want(http.StatusOK, "POST", "/v1/schedules/report/pause", nil)
	if rec = strict[ScheduleRecord](t, a.want(http.StatusOK, "GET", "/v1/schedules/report", nil).body); !rec.Paused {
		t.Errorf("after pause: %+v", rec)
	}
	a.want(http.StatusOK, "POST", "/v1/schedules/report/resume", nil)
	if s, err := a.store.GetSchedule(t.Context(), "report"); err != nil || s.Paused {
		t.Errorf("after resume: %+v %v", s, err)
	}
	a.want(http.StatusOK, "DELETE", "/v1/schedules/report", nil)
	wantErr(t, a.want(http.StatusNotFound, "GET", "/v1/schedules/report", nil), weir.ErrNotFound.Code, "")
	wantErr(t, a.want(http.StatusNotFound, "DELETE", "/v1/schedules/report", nil), weir.ErrNotFound.Code, "")
	wantErr(t, a.want(http.StatusNotFound, "POST", "/v1/schedules/report/pause", nil), weir.ErrNotFound.Code, "")

	for _, c := range []struct{ body, field string }{
		{`{"job":{"queue":"q"}}`, "cron"},
		{`{"cron":"61 * * * *","job":{"queue":"q"}}`, "cron"},
		{`{"every":"soon","job":{"queue":"q"}}`, "every"},
		{`{"every":"1500ms","job":{"queue":"q"}}`, "every"},
		{`{"every":"0s","job":{"queue":"q"}}`, "every"},
		{`{"cron":"@every 1ms","job":{"queue":"q"}}`, "cron"},
		{`{"cron":"@every 0s","job":{"queue":"q"}}`, "cron"},
		{`{"cron":"0 9 * * *","tz":"Local","job":{"queue":"q"}}`, "tz"},
		{`{"cron":"CRON_TZ=Local 0 9 * * *","job":{"queue":"q"}}`, "cron"},
		{`{"cron":"CRON_TZ=UTC","job":{"queue":"q"}}`, "cron"},
		{`{"every":"1m"}`, "job"},
		{`{"every":"1m","job":{"queue":"q"},"workflow":{"tasks":[]}}`, "job"},
		{`{"every":"1m","job":{"queue":"q"},"missed":"all"}`, "missed"},
		{`{"every":"1m","workflow":{"tasks":[{"name":"a"}]}}`, "workflow.tasks[0].run"},
		{`{"every":"1m","workflow":{"id":"nightly","tasks":[{"name":"a","run":"true"}]}}`, "workflow.id"},
		{`{"every":"1m","job":{"queue":"q"},"colour":"red"}`, "colour"},
		{`{"every":"1m","job":{"queue":"q","payload":1 2}}`, ""},
		// read as strictly as the other bodies (spec/rest.md): exact
		// names, no key twice, no null, nothing after the object
		{`{"Every":"1m","job":{"queue":"q"}}`, "Every"},
		{`{"every":"1m","job":{"Queue":"q"}}`, "job.Queue"},
		{`{"every":"1m","every":"1h","job":{"queue":"q"}}`, "every"},
		{`{"every":"1m","job":{"queue":"q","queue":"r"}}`, "job.queue"},
		{`{"every":"1m","tz":null,"job":{"queue":"q"}}`, "tz"},
		{`{"every":"1m","job":null,"workflow":{"tasks":[{"name":"a","run":"true"}]}}`, "job"},
		{`{"every":"1m","job":{"queue":"q","priority":null}}`, "job.priority"},
		{`{"every":"1m","job":{"queue":"q"}} {}`, ""},
		{`{"every":"1m","job":{"queue":"q"}}x`, ""},
		{`["every"]`, ""},
	} {
		wantErr(t, a.want(http.StatusBadRequest, "PUT", "/v1/schedules/x", c.body), weir.ErrInvalid.Code, c.field)
	}
	wantErr(t, a.want(http.StatusBadRequest, "PUT", "/v1/schedules/a%20b", `{"every":"1m","job":{"queue":"q"}}`), weir.ErrInvalid.Code, "name")
}

// The schedule routes on a namespace of 4 partitions (spec/partitions.md,
// Schedules): schedules whose names land in different partitions are put,
// listed by name and fired; the tick's workflow, "<name>@<seconds>", is
// read and cancelled by ID through /v1/workflows/{id}, the tick's job
// through /v1/jobs/{id}.
func TestSchedulesPartitions(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t, redistest.Default(t).Options)
	ns := redistest.Namespace(t, rdb, "restsched-")
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Config: engine.Config{Partitions: 4}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newAPI(t, s, Config{Token: testToken, Limits: s.Config().Limits}))
	t.Cleanup(srv.Close)
	a := &apiT{t: t, url: srv.URL, token: testToken, store: s}
	// report: partition 3, nightly: 2
	a.want(http.StatusCreated, "PUT", "/v1/schedules/report", `{"every":"1h","job":{"queue":"reports"}}`)
	a.want(http.StatusCreated, "PUT", "/v1/schedules/nightly", `{"every":"1h","workflow":{"tasks":[{"name":"a","run":"true"}]}}`)
	list := strict[struct {
		Schedules []ScheduleRecord `json:"schedules"`
	}](t, a.want(http.StatusOK, "GET", "/v1/schedules", nil).body)
	if len(list.Schedules) != 2 || list.Schedules[0].Name != "nightly" || list.Schedules[1].Name != "report" {
		t.Fatalf("list %+v", list)
	}
	ids := map[string]string{}
	for _, name := range []string{"nightly", "report"} {
		sc, err := s.GetSchedule(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := engine.FireDue(t.Context(), s, s, sc, sc.Next)
		if err != nil || res.Outcome != engine.FireFired || res.ID != name+"@"+strconv.FormatInt(sc.Next.Unix(), 10) {
			t.Fatalf("fire %s: %+v, %v", name, res, err)
		}
		ids[name] = res.ID
	}
	wf := strict[map[string]any](t, a.want(http.StatusOK, "GET", "/v1/workflows/"+ids["nightly"], nil).body)
	if wf["id"] != ids["nightly"] || wf["state"] != "running" {
		t.Fatalf("the tick's workflow: %v", wf)
	}
	job := strict[map[string]any](t, a.want(http.StatusOK, "GET", "/v1/jobs/"+ids["report"], nil).body)
	if job["id"] != ids["report"] || job["queue"] != "reports" {
		t.Fatalf("the tick's job: %v", job)
	}
	a.want(http.StatusOK, "GET", "/v1/jobs/"+ids["nightly"]+"%2Fa", nil)
	a.want(http.StatusOK, "POST", "/v1/workflows/"+ids["nightly"]+"/cancel", nil)
	if rec := strict[ScheduleRecord](t, a.want(http.StatusOK, "GET", "/v1/schedules/nightly", nil).body); rec.LastID != ids["nightly"] {
		t.Errorf("the schedule's last ID %q", rec.LastID)
	}
	// a workflow may be submitted under a tick's form of ID, not under a
	// delivery's
	a.want(http.StatusCreated, "POST", "/v1/workflows", `{"id":"mine@12","tasks":[{"name":"a","run":"true"}]}`)
	wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/workflows", `{"id":"mine@webhook","tasks":[{"name":"a","run":"true"}]}`), weir.ErrInvalid.Code, "id")
}
