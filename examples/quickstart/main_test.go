package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestQuickstartRunsTheDiamondToCompletion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out strings.Builder
	if err := run(ctx, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"workflow photo-42 completed",
		"publish    completed  publish(resize(fetch(photo-42.jpg))+thumbnail(fetch(photo-42.jpg)))",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, " ran "); n != 4 {
		t.Errorf("%d task runs, want 4:\n%s", n, got)
	}
}
