package main

import (
	"testing"
	"time"

	"github.com/weirflow/weir/examples/internal/exampletest"
)

func TestImagePipeline(t *testing.T) {
	const want = `workflow completed
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
	exampletest.CheckOutput(t, time.Minute, want, run)
}
