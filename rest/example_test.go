package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/rest"
)

// The REST API on a store of the program's own, served by net/http: a
// workflow file submitted as JSON, then read back.
func ExampleNewHandler() {
	store := memstore.New() // or redisstore.New(redisClient, redisstore.Options{})
	h, err := rest.NewHandler(rest.Config{
		Store: store,
		Token: "a-token-of-at-least-16-characters", // every /v1 route requires it
	})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h) // or http.Server{Handler: h}
	defer srv.Close()

	do := func(method, path, body string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer a-token-of-at-least-16-characters")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer res.Body.Close()
		var reply struct{ ID, State, Code string }
		if err := json.NewDecoder(res.Body).Decode(&reply); err != nil {
			panic(err)
		}
		if reply.Code != "" {
			fmt.Println(res.Status, reply.Code) // an error body
			return
		}
		fmt.Println(res.Status, reply.ID, reply.State) // a workflow record
	}
	do("POST", "/v1/workflows", `{"id": "hello", "tasks": [{"name": "greet", "run": "echo hello"}]}`)
	do("GET", "/v1/workflows/hello", "")
	do("GET", "/v1/workflows/nope", "")
	// Output:
	// 201 Created hello running
	// 200 OK hello running
	// 404 Not Found NOTFOUND
}
