package engine

import (
	"fmt"
	"slices"
	"testing"
)

// One key's 20,000 ready jobs (the bound does not depend on how many)
// delay another key's first job by at most
// one claim batch: B's job, enqueued last, is in the first claim of 10,
// and the claims after it go on with A's jobs in their order.
func TestKeysFairnessBound(t *testing.T) {
	h := rtNewWith(t, DefaultConfig())
	for i := range 20_000 {
		h.enqueue(JobSpec{ID: fmt.Sprintf("a%06d", i), Queue: "q", Key: "A"})
	}
	h.enqueue(JobSpec{ID: "b", Queue: "q", Key: "B"})
	got := h.claimIDs(10, "q")
	if len(got) != 10 || !slices.Contains(got, "b") {
		t.Fatalf("first claim of 10 = %v, want b among them", got)
	}
	want := []string{"a000000", "b", "a000001", "a000002"}
	if !slices.Equal(got[:4], want) {
		t.Errorf("first claim starts %v, want %v (the rotation: A, B, then A alone)", got[:4], want)
	}
	if next := h.claimIDs(2, "q"); !slices.Equal(next, []string{"a000009", "a000010"}) {
		t.Errorf("next claim %v, want A's jobs in FIFO order", next)
	}
}

// A per-key limit never lets a claim lease more of one key than the
// limit, however large the claim, and the other key's jobs fill it.
func TestKeysLimitInClaim(t *testing.T) {
	h := rtNewWith(t, DefaultConfig())
	if err := h.m.LimitKeys(h.now, LimitKeysParams{Queue: "q", Concurrency: 2}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		h.enqueue(JobSpec{ID: fmt.Sprintf("a%d", i), Queue: "q", Key: "A"})
		h.enqueue(JobSpec{ID: fmt.Sprintf("b%d", i), Queue: "q", Key: "B"})
	}
	if got := h.claimIDs(10, "q"); !slices.Equal(got, []string{"a0", "b0", "a1", "b1"}) {
		t.Errorf("claim = %v, want two of each key", got)
	}
	if got := h.claimIDs(10, "q"); len(got) != 0 {
		t.Errorf("claim at both limits = %v, want none", got)
	}
}
