package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// walkNearestCompensated is the search nearestCompensated replaced, kept
// as its reference: from each task with an undo, a depth-first walk of its
// descendants that stops at tasks with an undo, skipping regions without
// any below them. It costs a walk of the region under each undo; the
// lists it finds must be the same.
func walkNearestCompensated(n int, dependents [][]int, has func(int) bool, below []bool) [][]int {
	out := make([][]int, n)
	seen := make([]int, n)
	var stack []int
	for x := n - 1; x >= 0; x-- {
		if !has(x) || !below[x] {
			continue
		}
		stack = append(stack[:0], dependents[x]...)
		for len(stack) > 0 {
			y := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[y] == x+1 {
				continue
			}
			seen[y] = x + 1
			if has(y) {
				out[x] = append(out[x], y)
			} else if below[y] {
				stack = append(stack, dependents[y]...)
			}
		}
	}
	return out
}

// TestNearestCompensatedMatchesTheWalk: on random DAGs (chains, fan-outs,
// joins, few or many undos), the lists made in one pass hold the same
// tasks as the walk's, for every task with an undo.
func TestNearestCompensatedMatchesTheWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 2000 {
		n := 1 + rng.IntN(60)
		dependents := make([][]int, n)
		for i := 1; i < n; i++ {
			for range rng.IntN(4) {
				d := rng.IntN(i)
				if !slices.Contains(dependents[d], i) {
					dependents[d] = append(dependents[d], i)
				}
			}
		}
		undo := make([]bool, n)
		p := rng.Float64()
		for i := range undo {
			undo[i] = rng.Float64() < p
		}
		has := func(i int) bool { return undo[i] }
		below := make([]bool, n)
		for v := n - 1; v >= 0; v-- {
			for _, d := range dependents[v] {
				if undo[d] || below[d] {
					below[v] = true
					break
				}
			}
		}
		got := nearestCompensated(n, dependents, has, below)
		want := walkNearestCompensated(n, dependents, has, below)
		for x := range n {
			if !undo[x] || !below[x] {
				continue
			}
			g, w := slices.Clone(got[x]), slices.Clone(want[x])
			slices.Sort(g)
			slices.Sort(w)
			if !slices.Equal(g, w) {
				t.Fatalf("round %d, task %d: one pass %v, walk %v (dependents %v, undos %v)", round, x, g, w, dependents, undo)
			}
		}
	}
}
