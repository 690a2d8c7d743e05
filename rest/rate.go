package rest

import (
	"fmt"
	"github.com/weirflow/weir"
	"net/http"
	"strconv"
	"time"

	"github.com/weirflow/weir/engine"
)

// rateLimitQueue sets a queue's rate limit from the query's limit and
// period_ms (limit 0 removes it; period_ms is then not needed).
func (a *api) rateLimitQueue(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !engine.ValidName(name) {
		writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "name", Message: fmt.Sprintf("queue name %q must "+engine.NameRule, name)})
		return
	}
	q := r.URL.Query()
	v := q.Get("limit")
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > engine.MaxRateLimit {
		writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "limit",
			Message: fmt.Sprintf("limit %q must be an integer from 0 (no limit) to %d", v, engine.MaxRateLimit)})
		return
	}
	p := engine.RateLimitQueueParams{Queue: name, Limit: n}
	if n > 0 {
		v = q.Get("period_ms")
		ms, err := strconv.ParseInt(v, 10, 64)
		lo, hi := engine.MinRatePeriod.Milliseconds(), engine.MaxRatePeriod.Milliseconds()
		if err != nil || ms < lo || ms > hi {
			writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "period_ms",
				Message: fmt.Sprintf("period_ms %q must be an integer from %d to %d with a limit", v, lo, hi)})
			return
		}
		p.Period = time.Duration(ms) * time.Millisecond
	}
	if err := a.store.RateLimitQueue(r.Context(), p); err != nil {
		a.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Name         string `json:"name"`
		RateLimit    int    `json:"rate_limit"`
		RatePeriodMS int64  `json:"rate_period_ms"`
	}{name, n, p.Period.Milliseconds()})
}
