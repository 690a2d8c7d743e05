package dashboard_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/weirflow/weir/dashboard"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/rest"
)

// A Go program serves the dashboard with the REST API by setting
// rest.Config.Dashboard: the page at /, the API under /v1 behind the token.
func Example() {
	h, err := rest.NewHandler(rest.Config{
		Store:     memstore.New(),
		Token:     "example-token-0123456789",
		Dashboard: dashboard.Handler(),
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h) // or http.Serve(listener, h)
	defer srv.Close()

	for _, path := range []string{"/", "/v1/workflows"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			log.Fatal(err)
		}
		res.Body.Close()
		fmt.Println(path, res.StatusCode, res.Header.Get("Content-Type"))
	}
	// Output:
	// / 200 text/html; charset=utf-8
	// /v1/workflows 401 application/json
}
