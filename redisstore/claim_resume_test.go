package redisstore

import (
	"slices"
	"testing"
)

// A claim that stopped goes on from its queue, without the queues it
// visited before it.
func TestResumeQueues(t *testing.T) {
	for _, c := range []struct {
		qs   []string
		at   int
		want []string
	}{
		{[]string{"a", "b", "c"}, 0, []string{"a", "b", "c"}},
		{[]string{"a", "b", "a", "c"}, 1, []string{"b", "c"}},
		{[]string{"q3", "q2", "q3"}, 1, []string{"q2"}},
		{[]string{"a", "b", "b", "c", "a"}, 1, []string{"b", "b", "c"}},
	} {
		if got := resumeQueues(c.qs, c.at); !slices.Equal(got, c.want) {
			t.Errorf("resumeQueues(%v, %d) = %v, want %v", c.qs, c.at, got, c.want)
		}
	}
}
