package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/examples/internal/exampletest"
)

func TestImagePipeline(t *testing.T) {
	exampletest.OnEachStore(t, func(t *testing.T, store exampletest.Store) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var out strings.Builder
		if err := run(ctx, store, &out); err != nil {
			t.Fatal(err)
		}
		want := `workflow completed
  fetch     completed after []
  small     completed after [fetch]
  medium    completed after [fetch]
  large     completed after [fetch]
  watermark completed after [large]
  publish   completed after [small medium watermark]
published photo-42.jpg:
  photo-42@1024w (1024x768)
  photo-42@2048w+wm (2048x1536)
  photo-42@320w (320x240)
`
		if out.String() != want {
			t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
		}
	})
}
