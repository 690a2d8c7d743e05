package engine

import "github.com/weirflow/weir"
import "fmt"

// MaxPartitions bounds Config.Partitions.
const MaxPartitions = 1024

// RoutingID is the part of an ID that places it (spec/partitions.md): the
// ID up to its first '/' or '@', so that a task job "<wf>/<task>", an undo
// job "<wf>/<task>/undo" and a webhook delivery "<wf>@webhook" route as
// their workflow; the whole ID when it has neither.
func RoutingID(id string) string {
	for i := 0; i < len(id); i++ {
		if id[i] == '/' || id[i] == '@' {
			return id[:i]
		}
	}
	return id
}

// Partition returns the partition, in [0, n), of the record with ID id in
// a namespace of n partitions: the 32-bit FNV-1a hash of RoutingID(id)
// modulo n. n < 2 gives 0.
func Partition(id string, n int) int {
	if n < 2 {
		return 0
	}
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c == '/' || c == '@' {
			break
		}
		h ^= uint32(c)
		h *= 16777619
	}
	return int(h % uint32(n))
}

// PartitionCount is the number of partitions Config c asks for: 1 for 0.
func (c Config) PartitionCount() int { return max(c.Partitions, 1) }

// ValidatePartitions checks Config.Partitions.
func (c Config) ValidatePartitions() error {
	if c.Partitions < 0 || c.Partitions > MaxPartitions {
		return fmt.Errorf("%w: partitions %d outside [0, %d]", weir.ErrInvalid, c.Partitions, MaxPartitions)
	}
	return nil
}

// CheckFinishAdds refuses, with ErrInvalid, a finish whose outcomes add
// tasks in more than one of n partitions (spec/partitions.md, Finish): no
// partition can check another's additions, so such a finish could not be
// refused whole.
func CheckFinishAdds(p FinishParams, n int) error {
	first := -1
	for _, o := range p.Outcomes {
		if len(o.Add) == 0 {
			continue
		}
		q := Partition(o.JobID, n)
		if first < 0 {
			first = q
		} else if q != first {
			return invalid("", "outcomes", "outcomes add tasks in partitions %d and %d; the outcomes of one finish may add tasks in one partition", first, q)
		}
	}
	return nil
}
