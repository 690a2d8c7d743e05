package redisstore

import "strconv"

// partitionTag returns the hash tag of partition p of namespace ns in a
// namespace of n partitions (spec/keys.md, Layout). With n = 1 it is
// "<ns>:0", the layout of a namespace without partitions. With n > 1 it
// is "<ns>:<p>" when that hashes into the partition's slot range,
// [p·16384/n, (p+1)·16384/n), else "<ns>:<p>.<s>" with the smallest s ≥ 1
// that does: the partitions' slots are spread evenly over the slot space,
// so that a Cluster whose masters serve equal contiguous slot ranges (what
// `redis-cli --cluster create` makes) holds an equal share of them.
func partitionTag(ns string, p, n int) string {
	base := ns + ":" + strconv.Itoa(p)
	if n <= 1 {
		return base
	}
	lo, hi := p*16384/n, (p+1)*16384/n
	in := func(tag string) bool {
		s := int(crc16([]byte(tag)) % 16384)
		return s >= lo && s < hi
	}
	if in(base) {
		return base
	}
	for s := 1; ; s++ {
		if tag := base + "." + strconv.Itoa(s); in(tag) {
			return tag
		}
	}
}

// PartitionPrefix returns the key prefix, "weir:{<tag>}:", of partition p
// of namespace ns in a namespace of n partitions (spec/partitions.md,
// Slots): every key of the partition starts with it, so `CLUSTER KEYSLOT`
// of it is the partition's slot. ns must be a valid namespace and p in
// [0, n).
func PartitionPrefix(ns string, p, n int) string {
	return "weir:{" + partitionTag(ns, p, n) + "}:"
}
