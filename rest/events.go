package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/weirflow/weir"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weirflow/weir/engine"
)

// The event stream (spec/events.md): GET /v1/events pages through it as
// JSON, or streams it as Server-Sent Events when the request accepts
// text/event-stream; GET /v1/events/stream always streams.

// eventPage is the JSON body of GET /v1/events.
type eventPage struct {
	Events []weir.Event `json:"events"`
	// Next is the cursor for the next page (after=); the request's after
	// when nothing was read.
	Next string `json:"next"`
}

// sseWait bounds one blocking read of a stream; a keep-alive comment
// follows a read that found nothing.
const sseWait = 15 * time.Second

func (a *api) eventReader(w http.ResponseWriter) engine.EventReader {
	er, ok := a.store.(engine.EventReader)
	if !ok {
		writeError(w, http.StatusNotImplemented, apiError{Code: codeInternal, Message: "this store keeps no event stream"})
	}
	return er
}

// eventsParams reads after, workflow and limit.
func eventsParams(w http.ResponseWriter, r *http.Request) (engine.EventsParams, bool) {
	q := r.URL.Query()
	p := engine.EventsParams{After: q.Get("after"), Workflow: q.Get("workflow")}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || !decimal.MatchString(s) || n > engine.MaxEventsLimit {
			writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "limit", Message: fmt.Sprintf("limit %q is not an integer from 1 to %d", s, engine.MaxEventsLimit)})
			return p, false
		}
		p.Limit = n
	}
	if err := engine.ValidateEventsParams(p); err != nil {
		writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "workflow", Message: err.Error()})
		return p, false
	}
	return p, true
}

// acceptsEventStream: the request prefers Server-Sent Events.
func acceptsEventStream(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, _ := strings.Cut(part, ";")
		if strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
			return true
		}
	}
	return false
}

func (a *api) listEvents(w http.ResponseWriter, r *http.Request) {
	if acceptsEventStream(r) {
		a.streamEvents(w, r)
		return
	}
	er := a.eventReader(w)
	if er == nil {
		return
	}
	p, ok := eventsParams(w, r)
	if !ok {
		return
	}
	pg, err := er.Events(r.Context(), p)
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	if pg.Events == nil {
		pg.Events = []weir.Event{}
	}
	writeJSON(w, http.StatusOK, eventPage{Events: pg.Events, Next: pg.Next})
}

// sseID is the "id:" line of event i of page pg: its ID, which a
// reconnecting browser sends back as Last-Event-ID to resume after it. An
// event of a namespace of several partitions ("<p>|<id>",
// spec/partitions.md) is no cursor: only a page's last event carries one,
// the page's Next, so that a stream resumed mid-page sends that page's
// earlier events again.
func sseID(pg engine.EventPage, i int) string {
	id := pg.Events[i].ID
	if strings.Contains(id, "|") {
		if i < len(pg.Events)-1 {
			return ""
		}
		id = pg.Next
	}
	return "id: " + id + "\n"
}

// streamEvents answers with Server-Sent Events: each event as "id: <ID>",
// "event: <type>" and "data: <the event as JSON>", from after= (or the
// Last-Event-ID header a reconnecting browser sends), until the client
// goes away, StreamFor has passed or the server shuts down.
func (a *api) streamEvents(w http.ResponseWriter, r *http.Request) {
	er := a.eventReader(w)
	if er == nil {
		return
	}
	p, ok := eventsParams(w, r)
	if !ok {
		return
	}
	if id := r.Header.Get("Last-Event-ID"); id != "" && p.After == "" {
		p.After = id
	}
	ctx, cancel := context.WithTimeout(r.Context(), a.cfg.StreamFor)
	defer cancel()
	// the server's Shutdown waits for the requests in flight without
	// cancelling them: its start ends the stream
	down := a.down.of(r)
	shuttingDown := func() {
		writeError(w, http.StatusServiceUnavailable, apiError{Code: weir.ErrUnavailable.Code, Message: "the server is shutting down: reconnect once it is back"})
	}
	if down.Err() != nil {
		shuttingDown()
		return
	}
	defer context.AfterFunc(down, cancel)()
	rc := http.NewResponseController(w)
	// the first read before the headers: a bad cursor is a JSON error
	pg, err := er.Events(ctx, p)
	if err != nil {
		if down.Err() != nil && r.Context().Err() == nil {
			shuttingDown()
			return
		}
		a.storeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for {
		// a stream outlives the server's write timeout
		_ = rc.SetWriteDeadline(time.Now().Add(sseWait + time.Minute))
		for i, e := range pg.Events {
			b, err := json.Marshal(e)
			if err != nil {
				return
			}
			if _, err := fmt.Fprintf(w, "%sevent: %s\ndata: %s\n\n", sseID(pg, i), e.Type, b); err != nil {
				return
			}
		}
		if len(pg.Events) == 0 {
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		}
		if err := rc.Flush(); err != nil {
			return
		}
		p.After = pg.Next
		p.Wait = sseWait
		if d, ok := ctx.Deadline(); ok {
			p.Wait = min(p.Wait, max(time.Until(d), time.Millisecond))
		}
		if pg, err = er.Events(ctx, p); err != nil || ctx.Err() != nil {
			return // the client went away, the stream's time is up, or the store failed: the client reconnects
		}
	}
}

// eventsSwitch is a store whose event stream can be switched off
// (client.EventsSwitch).
type eventsSwitch interface {
	SetEventsOff(ctx context.Context, off bool) error
}

func (a *api) eventsOn(w http.ResponseWriter, r *http.Request)  { a.setEvents(w, r, false) }
func (a *api) eventsOff(w http.ResponseWriter, r *http.Request) { a.setEvents(w, r, true) }

// setEvents switches the namespace's event stream on (with the default
// cap) or off: POST /v1/events/on, /v1/events/off.
func (a *api) setEvents(w http.ResponseWriter, r *http.Request, off bool) {
	sw, ok := a.store.(eventsSwitch)
	if !ok {
		writeError(w, http.StatusNotImplemented, apiError{Code: codeInternal, Message: "this store has no event stream switch"})
		return
	}
	if err := sw.SetEventsOff(r.Context(), off); err != nil {
		a.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Events bool `json:"events"`
	}{!off})
}

// serversDown gives each http.Server that serves an event stream a
// context cancelled when its Shutdown begins (http.Server.Shutdown waits
// for the requests in flight and cancels none: a stream would hold it
// until its StreamFor). It registers with a server once, at its first
// stream, and keeps the server's context for the handler's life: a
// stream that comes after the shutdown began ends at once.
type serversDown struct {
	mu sync.Mutex
	m  map[*http.Server]context.Context
}

// of returns the context of the server of r (http.ServerContextKey); one
// never cancelled when r came another way (a test's ServeHTTP, say).
func (d *serversDown) of(r *http.Request) context.Context {
	srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	if srv == nil {
		return context.Background()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	ctx, ok := d.m[srv]
	if !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(context.Background())
		srv.RegisterOnShutdown(cancel)
		d.m[srv] = ctx
	}
	return ctx
}
