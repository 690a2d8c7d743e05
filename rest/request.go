package rest

import (
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// The strict reading of a request's query and body (spec/rest.md#requests):
// what the spec does not allow is refused, never ignored.

// repeatable are the query parameters that may be given several times
// (GET /v1/workflows?label=a=1&label=b=2).
var repeatable = map[string]bool{"label": true}

// checkQuery refuses a query that does not parse, a parameter the route
// does not take, a parameter given twice (but a repeatable one) and an
// empty value; it writes the error and returns false.
func checkQuery(w http.ResponseWriter, r *http.Request, allowed []string) bool {
	if r.URL.RawQuery == "" {
		return true
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Message: "the query string does not parse (escape with %XX, separate with &)"})
		return false
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names) // the first problem in a stable order
	for _, name := range names {
		vs := q[name]
		switch {
		case !slices.Contains(allowed, name):
			takes := "takes no query parameters"
			if len(allowed) > 0 {
				takes = "takes " + strings.Join(allowed, ", ")
			}
			writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: name, Message: fmt.Sprintf("unknown query parameter %q: %s %s %s", name, r.Method, r.URL.Path, takes)})
			return false
		case len(vs) > 1 && !repeatable[name]:
			writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: name, Message: fmt.Sprintf("query parameter %s is given %d times: give it once", name, len(vs))})
			return false
		case vs[0] == "":
			writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: name, Message: fmt.Sprintf("query parameter %s is empty: give a value or leave it out", name)})
			return false
		}
	}
	return true
}

// noBody refuses a request body on a route that takes none; it writes the
// error and returns false.
func (a *api) noBody(w http.ResponseWriter, r *http.Request) bool {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return true
	}
	var one [1]byte
	n, _ := io.ReadFull(r.Body, one[:])
	if n == 0 {
		return true
	}
	writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Message: fmt.Sprintf("%s %s takes no request body", r.Method, r.URL.Path)})
	return false
}

// readBody reads the request body up to the API's limit; past it, it
// answers 413 and returns false.
func (a *api) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	tooLarge := apiError{Code: weir.ErrTooLarge.Code, Message: fmt.Sprintf("the request body is over the limit of %d bytes", a.cfg.MaxBody)}
	if r.ContentLength > a.cfg.MaxBody {
		writeError(w, http.StatusRequestEntityTooLarge, tooLarge)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.cfg.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, tooLarge)
		} else {
			writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Message: "the request body could not be read to its end"})
		}
		return nil, false
	}
	return body, true
}
