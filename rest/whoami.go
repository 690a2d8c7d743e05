package rest

import "net/http"

// GET /v1/whoami (spec/rest.md, Who am I): what the request's token may
// do, so that a client (the dashboard) offers only the actions it may
// take.
var whoamiRoutes = []route{
	{"GET", "/v1/whoami", (*api).whoami, false, nil},
}

func init() { routes = append(routes, whoamiRoutes...) }

// WhoamiRecord is the body of GET /v1/whoami.
type WhoamiRecord struct {
	// Access is "write" for the read-write token (or any request when
	// the server has no token), "read" for a read-only token: GET and
	// HEAD only, every other method is 403 READONLY.
	Access string `json:"access"`
	// Token is false when the server has no token (every request may
	// write).
	Token bool `json:"token"`
}

func (a *api) whoami(w http.ResponseWriter, r *http.Request) {
	rec := WhoamiRecord{Access: "write", Token: a.cfg.Token != ""}
	if a.access(r) == accessRead {
		rec.Access = "read"
	}
	writeJSON(w, http.StatusOK, rec)
}
