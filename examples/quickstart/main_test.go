package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// TestQuickstartPrintsTheJoinedResult runs main and reads what it printed.
func TestQuickstartPrintsTheJoinedResult(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	main()
	os.Stdout = stdout
	w.Close()
	if got, want := strings.TrimSpace(string(<-done)), "completed HELLO, WORLD <nil>"; got != want {
		t.Fatalf("quickstart printed %q, want %q", got, want)
	}
}

// TestREADMEShowsTheQuickstart keeps the README's Go quick start equal to
// this program, which the build compiles.
func TestREADMEShowsTheQuickstart(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := bytes.Cut(readme, []byte("<!-- quickstart: examples/quickstart/main.go -->\n```go\n"))
	block, _, closed := bytes.Cut(after, []byte("```\n"))
	if !ok || !closed {
		t.Fatal("README.md has no quick start block after <!-- quickstart: examples/quickstart/main.go -->")
	}
	if !bytes.Equal(block, src) {
		t.Fatal("README.md's quick start differs from examples/quickstart/main.go; copy the file into the README")
	}
}
