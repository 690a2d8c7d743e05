package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
)

// The bulk job routes of spec/rest.md (Many jobs of a queue): retry,
// cancel or delete a bounded number of a queue's jobs in one call, those
// of one of its lists or those named (client.RetryJobs and the others).
var bulkRoutes = []route{
	{"POST", "/v1/queues/{name}/jobs/retry", bulkHandler("retry", (*client.Client).RetryJobs), true, nil},
	{"POST", "/v1/queues/{name}/jobs/cancel", bulkHandler("cancel", (*client.Client).CancelJobs), true, nil},
	{"POST", "/v1/queues/{name}/jobs/delete", bulkHandler("delete", (*client.Client).DeleteJobs), true, nil},
}

func init() { routes = append(routes, bulkRoutes...) }

// bulkKeys are the keys of a bulk call's body.
var bulkKeys = []string{"state", "ids", "limit", "cursor"}

// bulkBody is the body of a bulk call.
type bulkBody struct {
	State  string   `json:"state"`
	IDs    []string `json:"ids"`
	Limit  int      `json:"limit"`
	Cursor string   `json:"cursor"`
}

// BulkRecord is the answer of a bulk call.
type BulkRecord struct {
	Queue  string `json:"queue"`
	Action string `json:"action"`
	// Done are the IDs of the jobs acted on.
	Done    []string      `json:"done"`
	Skipped []BulkSkipped `json:"skipped"`
	// More is true when the list has jobs after those looked at;
	// NextCursor (null otherwise) goes on after them.
	More       bool    `json:"more"`
	NextCursor *string `json:"next_cursor"`
}

// BulkSkipped is a job a bulk call left as it was, with why.
type BulkSkipped struct {
	ID      string `json:"id"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// bulkHandler answers one bulk route: it reads the body strictly (JSON
// only), checks it, and answers 200 with what was done. A store error
// after some jobs were acted on is answered as an error: a call again
// goes on with the jobs left.
func bulkHandler(verb string, act func(*client.Client, context.Context, client.JobsParams) (client.JobsResult, error)) func(*api, http.ResponseWriter, *http.Request) {
	return func(a *api, w http.ResponseWriter, r *http.Request) {
		name, ok := queueName(w, r)
		if !ok {
			return
		}
		body, ok := a.readBody(w, r)
		if !ok {
			return
		}
		bad := func(field, format string, args ...any) {
			writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: field, Message: fmt.Sprintf(format, args...)})
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		err := checkObject(dec, "", bulkKeys, func(key string) error { return checkScalar(dec, key) })
		if err == nil {
			if _, e := dec.Token(); e != io.EOF {
				err = &scheduleBodyError{msg: "the body holds more than one JSON object: nothing may follow it"}
			}
		}
		if err != nil {
			var be *scheduleBodyError
			errors.As(err, &be)
			bad(be.field, "%s (the body is a JSON object: state, ids, limit, cursor)", be.msg)
			return
		}
		var b bulkBody
		dec = json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				bad(te.Field, "%s must be %s", te.Field, map[string]string{"state": "a string", "cursor": "a string", "ids": "an array of strings", "limit": "an integer"}[te.Field])
				return
			}
			bad("", "the body does not decode: %v", err)
			return
		}
		p := client.JobsParams{Queue: name, State: weir.JobList(b.State), IDs: b.IDs, Limit: b.Limit, Cursor: b.Cursor}
		if err := client.ValidateJobsParams(verb, p); err != nil {
			a.storeError(w, r, err)
			return
		}
		res, err := act(client.New(a.store), r.Context(), p)
		if err != nil {
			a.storeError(w, r, err)
			return
		}
		rec := BulkRecord{Queue: name, Action: verb, Done: res.Done, Skipped: make([]BulkSkipped, len(res.Skipped)),
			More: res.NextCursor != "", NextCursor: optString(res.NextCursor)}
		if rec.Done == nil {
			rec.Done = []string{}
		}
		for i, s := range res.Skipped {
			rec.Skipped[i] = BulkSkipped{ID: s.ID, Code: s.Code, Message: s.Message}
		}
		writeJSON(w, http.StatusOK, rec)
	}
}
