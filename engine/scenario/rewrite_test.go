package scenario

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestRewrite: the reply lines that differ from the Model's are replaced
// by its reply (keeping the variables that still match, the lines'
// layout and every other line); the result runs green; a scenario whose
// replies all match is left alone.
func TestRewrite(t *testing.T) {
	const src = `# rewrite
submit w1
  task a q=q
  task b q=q after=a
> created pushed=w1/zzz  # wrong
claim q
> w1/a attempt=7 token=$a
>   dep x done
finish w1/a $a completed
> completed pushed=w1/b wf=running
expect task w1 a completed
`
	const want = `# rewrite
submit w1
  task a q=q
  task b q=q after=a
> created pushed=w1/a
claim q
> w1/a attempt=1 token=$a
finish w1/a $a completed
> completed pushed=w1/b wf=running
expect task w1 a completed
`
	s, err := Parse("rw.txt", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	var m *Mismatch
	if _, err := RunModel(context.Background(), s); !errors.As(err, &m) || m.Line != 2 {
		t.Fatalf("run of the wrong file: %v, want a mismatch at line 2", err)
	}
	text, changed, err := Rewrite(context.Background(), s, NewModelTarget(s.Config))
	if err != nil || !changed {
		t.Fatalf("rewrite: changed %v, %v", changed, err)
	}
	if string(text) != want {
		t.Fatalf("rewritten:\n%s\nwant:\n%s", text, want)
	}
	s2, err := Parse("rw.txt", strings.NewReader(string(text)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunModel(context.Background(), s2); err != nil {
		t.Fatalf("the rewritten file: %v", err)
	}
	text, changed, err = Rewrite(context.Background(), s2, NewModelTarget(s2.Config))
	if err != nil || changed || text != nil {
		t.Fatalf("rewrite of a matching file: %q, changed %v, %v", text, changed, err)
	}
}

// TestRewriteStillFailsExpectations: a difference that is no reply line
// is a Mismatch under Rewrite too.
func TestRewriteStillFailsExpectations(t *testing.T) {
	s, err := Parse("rw.txt", strings.NewReader("submit w1\n  task a q=q\n> created pushed=w1/a\nexpect task w1 a running\n"))
	if err != nil {
		t.Fatal(err)
	}
	var m *Mismatch
	if _, _, err := Rewrite(context.Background(), s, NewModelTarget(s.Config)); !errors.As(err, &m) || m.Line != 4 {
		t.Fatalf("rewrite: %v, want a mismatch at line 4", err)
	}
}
