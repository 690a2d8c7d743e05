package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/rest"
	"github.com/weirflow/weir/worker"
)

// ResizeArgs is the payload of the resize queue, which a Go service
// declares; a service in any language produces its jobs over REST.
type ResizeArgs struct {
	URL   string `json:"url"`
	Width int    `json:"width"`
}

// Image is the result of a resize job.
type Image struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
}

// Resize is the typed queue: the Go worker's handler decodes the JSON
// payload of a REST request into a ResizeArgs.
var Resize = client.NewQueue[ResizeArgs, Image]("resize")

// A job enqueued by another language's service with POST /v1/jobs (here
// the request a Python or Node service would send, made with net/http) runs
// in an ordinary typed Go handler, and its result reads back as JSON.
func ExampleNewHandler_jobForGoHandler() {
	store := memstore.New() // or redisstore.New(redisClient, redisstore.Options{})
	h, err := rest.NewHandler(rest.Config{
		Store:      store,
		Token:      "the-read-write-token",
		ReadTokens: []string{"a-read-only-token"}, // GET and HEAD only
		NoShell:    true,                          // only payloads for Go handlers
	})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	// The Go worker: an ordinary handler of the typed queue.
	got := make(chan ResizeArgs, 1)
	w := worker.New(store, worker.Config{})
	worker.Handle(w, Resize, func(ctx context.Context, j *worker.Job[ResizeArgs]) (Image, error) {
		got <- j.Payload
		return Image{Path: "/img/640.png", Bytes: 1234}, nil
	})
	ctx := context.Background()
	if err := w.Start(ctx); err != nil {
		panic(err)
	}
	defer w.Stop(ctx)

	call := func(method, path, token, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	// curl -H "Authorization: Bearer $WEIR_TOKEN" -H 'Content-Type: application/json' \
	//   -d '{"id": "img-1", "queue": "resize", ...}' $WEIR_HTTP_URL/v1/jobs
	status, _ := call("POST", "/v1/jobs", "the-read-write-token",
		`{"id": "img-1", "queue": "resize", "payload": {"url": "https://example.com/a.png", "width": 640}, "retries": 3}`)
	fmt.Println("enqueued:", status)

	if _, err := client.OpenJob(client.New(store), Resize, "img-1").Wait(ctx); err != nil {
		panic(err)
	}
	fmt.Printf("handler got %+v\n", <-got)
	_, body := call("GET", "/v1/jobs/img-1", "a-read-only-token", "")
	var job struct {
		State  string
		Result json.RawMessage
	}
	if err := json.Unmarshal([]byte(body), &job); err != nil {
		panic(err)
	}
	fmt.Println(job.State, string(job.Result))

	status, body = call("POST", "/v1/jobs", "a-read-only-token", `{"queue": "resize"}`)
	fmt.Println(status, strings.Contains(body, "READONLY"))
	// Output:
	// enqueued: 201
	// handler got {URL:https://example.com/a.png Width:640}
	// completed {"bytes":1234,"path":"/img/640.png"}
	// 403 true
}
