package redisstore

import (
	"strings"
	"testing"

	"github.com/weirflow/weir/engine"
)

// TestPartitionTagSpread: with n > 1 partition p's slot lies in the p-th
// of n equal slot ranges; with n = 1 the tag is the one-partition layout's.
func TestPartitionTagSpread(t *testing.T) {
	for _, ns := range []string{"default", "a", strings.Repeat("N", 64), "x.y-z_0"} {
		if got := partitionTag(ns, 0, 1); got != ns+":0" {
			t.Fatalf("one partition: tag %q, want %q", got, ns+":0")
		}
		for _, n := range []int{2, 3, 8, 12, 64, engine.MaxPartitions} {
			seen := map[string]bool{}
			for p := range n {
				tag := partitionTag(ns, p, n)
				if !strings.HasPrefix(tag, ns+":") || seen[tag] {
					t.Fatalf("ns %q, %d partitions: tag %q of partition %d repeated or not the namespace's", ns, n, tag, p)
				}
				seen[tag] = true
				slot := keySlot("weir:{" + tag + "}:seq")
				if slot < p*16384/n || slot >= (p+1)*16384/n {
					t.Fatalf("ns %q, %d partitions: partition %d (tag %q) in slot %d, outside [%d, %d)", ns, n, p, tag, slot, p*16384/n, (p+1)*16384/n)
				}
			}
		}
	}
}
