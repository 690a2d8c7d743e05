package engine

import (
	"errors"
	"github.com/weirflow/weir"
	"hash/fnv"
	"math/rand/v2"
	"testing"
)

func TestRoutingID(t *testing.T) {
	for id, want := range map[string]string{
		"wf":                      "wf",
		"wf/task":                 "wf",
		"wf/task/undo":            "wf",
		"wf@webhook":              "wf",
		"wf@webhook.3":            "wf",
		"a.b-c_d":                 "a.b-c_d",
		weir.TaskJobID("w1", "t"): "w1",
	} {
		if got := RoutingID(id); got != want {
			t.Errorf("RoutingID(%q) = %q, want %q", id, got, want)
		}
	}
}

// TestPartition holds Partition to the standard library's FNV-1a of the
// routing ID.
func TestPartition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const chars = "abcXYZ019_.-"
	for range 2000 {
		b := make([]byte, 1+r.IntN(20))
		for i := range b {
			b[i] = chars[r.IntN(len(chars))]
		}
		id := string(b)
		n := 1 + r.IntN(40)
		h := fnv.New32a()
		h.Write([]byte(id))
		want := int(h.Sum32() % uint32(n))
		if n == 1 {
			want = 0
		}
		if got := Partition(id, n); got != want {
			t.Fatalf("Partition(%q, %d) = %d, want %d", id, n, got, want)
		}
		for _, derived := range []string{weir.TaskJobID(id, "t"), weir.UndoJobID(id, "t"), weir.WebhookRunJobID(id, 2)} {
			if got := Partition(derived, n); got != want {
				t.Fatalf("Partition(%q, %d) = %d, want %d (its workflow's)", derived, n, got, want)
			}
		}
	}
	if Partition("x", 0) != 0 || Partition("x", 1) != 0 {
		t.Fatal("a namespace of one partition places everything in partition 0")
	}
}

func TestValidatePartitions(t *testing.T) {
	for _, n := range []int{-1, MaxPartitions + 1} {
		if err := (Config{Partitions: n}).ValidatePartitions(); err == nil {
			t.Errorf("partitions %d accepted", n)
		}
	}
	for _, n := range []int{0, 1, 8, MaxPartitions} {
		if err := (Config{Partitions: n}).ValidatePartitions(); err != nil {
			t.Errorf("partitions %d: %v", n, err)
		}
	}
}

// TestCheckFinishAdds: the outcomes of one finish may add tasks in one
// partition only.
func TestCheckFinishAdds(t *testing.T) {
	const n = 8
	var a, b string // two workflows in different partitions
	for i := 0; b == ""; i++ {
		id := "w" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		switch {
		case a == "":
			a = id
		case Partition(id, n) != Partition(a, n):
			b = id
		}
	}
	add := []TaskSpec{{Name: "x", Queue: "q"}}
	same := FinishParams{Outcomes: []Outcome{{JobID: weir.TaskJobID(a, "t1"), Add: add}, {JobID: weir.TaskJobID(a, "t2"), Add: add}, {JobID: weir.TaskJobID(b, "t")}}}
	if err := CheckFinishAdds(same, n); err != nil {
		t.Fatalf("additions in one partition refused: %v", err)
	}
	two := FinishParams{Outcomes: []Outcome{{JobID: weir.TaskJobID(a, "t1"), Add: add}, {JobID: weir.TaskJobID(b, "t"), Add: add}}}
	if err := CheckFinishAdds(two, n); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("additions in two partitions: %v, want ErrInvalid", err)
	}
	if err := CheckFinishAdds(two, 1); err != nil {
		t.Fatalf("one partition: %v", err)
	}
}
