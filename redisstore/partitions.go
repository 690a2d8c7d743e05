package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// Partitions (spec/partitions.md): a Store holds its namespace's P parts,
// each the one-partition engine on its own slot, and routes every call by
// ID to the part of engine.Partition(id, P); the calls of the whole
// namespace reach every part. With P = 1 each call goes straight to the
// one part, which writes the keys a namespace without partitions has.

// npField is the field of weir:{<ns>:0}:seq that keeps a namespace's
// partition count (spec/keys.md); absent means 1.
const npField = "np"

// layout returns the store's partitions, reading (and for a new namespace
// of several partitions, writing) the namespace's count at the first call,
// after checking the server (checkServer: ErrUnsafeServer).
// A count other than the one the store was opened with (Partitions ≥ 1)
// is ErrInvalid, and nothing is written. An error is not kept: the next
// call reads again.
func (s *Store) layout(ctx context.Context) ([]*part, error) {
	if ps := s.parts.Load(); ps != nil {
		return *ps, nil
	}
	return s.initLayout(ctx)
}

func (s *Store) initLayout(ctx context.Context) ([]*part, error) {
	s.initMu.Lock()
	defer s.initMu.Unlock()
	if ps := s.parts.Load(); ps != nil {
		return *ps, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// the server first: a refused one gets no write either
	if err := s.checkServer(ctx); err != nil {
		return nil, err
	}
	n, _, err := s.readCount(ctx)
	if err != nil {
		return nil, err
	}
	// A namespace not written yet (fresh) is kept as one partition too:
	// looking again at later calls would cost the hot path a round trip
	// until the namespace is written (spec/keys.md, np).
	ps := []*part{s.part}
	if n > 1 {
		cfg := s.part.cfg
		cfg.Partitions = n
		ps = make([]*part, n)
		for p := range ps {
			ps[p] = newPart(s.client, keysOf(partitionTag(s.ns, p, n)), cfg, s.opts)
		}
	}
	s.parts.Store(&ps)
	return ps, nil
}

// readCount returns the namespace's partition count, checked against
// s.want, after checking the namespace's protocol marker (checkMarker):
// a namespace of protocol 2, or one weir migrate is converting, is
// ErrNeedsMigration, nothing written. A namespace not written yet takes
// s.want (written with HSETNX when it is more than 1, after the marker, then
// read back: of two stores that race to write a new namespace, the second
// learns the first's count). A P = 1 store writes nothing (its first write
// call writes the marker). The race accepted (spec/keys.md, np): a store of
// one partition that writes a new namespace while a store of several
// checks it (between that store's EXISTS and its HSETNX) leaves a
// namespace whose partition 0 was written as one partition and that says
// it has several.
//
// fresh reports a namespace not written yet, taken as one partition.
func (s *Store) readCount(ctx context.Context) (n int, fresh bool, err error) {
	k := keysOf(s.ns + ":0")
	pipe := s.client.Pipeline()
	mark := pipe.Get(ctx, k.marker)
	ex := pipe.Exists(ctx, k.seq)
	get := pipe.HGet(ctx, k.seq, npField)
	_, _ = pipe.Exec(ctx) // each command's error is read below
	if err := checkMarker(s.ns, mark); err != nil {
		return 0, false, err
	}
	if err := ex.Err(); err != nil {
		return 0, false, mapErr(err)
	}
	v, err := get.Result()
	switch {
	case err == nil:
	case !errors.Is(err, redis.Nil):
		return 0, false, mapErr(err)
	case ex.Val() > 0:
		// written without a count (by a store of one partition)
		v = "1"
	case s.want <= 1:
		v, fresh = "1", true
	default:
		// the marker first: a protocol 2 store that comes later is refused
		// (its HGET of the marker fails), and one that came first made it
		// its seq hash, which checkMarker refuses
		if err := s.client.SetNX(ctx, k.marker, strconv.Itoa(ProtocolVersion), 0).Err(); err != nil {
			return 0, false, mapErr(err)
		}
		if err := checkMarker(s.ns, s.client.Get(ctx, k.marker)); err != nil {
			return 0, false, err
		}
		if err := s.client.HSetNX(ctx, k.seq, npField, s.want).Err(); err != nil {
			return 0, false, mapErr(err)
		}
		if v, err = s.client.HGet(ctx, k.seq, npField).Result(); err != nil {
			return 0, false, mapErr(err)
		}
	}
	n, err = strconv.Atoi(v)
	if err != nil || n < 1 || n > engine.MaxPartitions {
		return 0, false, fmt.Errorf("%w: namespace %q keeps partition count %q", weir.ErrProtocol, s.ns, v)
	}
	if s.want != 0 && s.want != n {
		return 0, false, fmt.Errorf("%w: namespace %q has %d partitions, this store was opened with %d (open it with %d, or 0 to take the namespace's: Options.Config.Partitions in Go, --partitions or WEIR_PARTITIONS for weir; a namespace keeps the count it was first written with)", weir.ErrInvalid, s.ns, n, s.want, n)
	}
	return n, fresh, nil
}

// at returns the part of the record with ID id.
func at(ps []*part, id string) *part {
	if len(ps) == 1 {
		return ps[0]
	}
	return ps[engine.Partition(id, len(ps))]
}

// partErr names partition p in err (a fan-out call's error).
func partErr(ps []*part, p int, err error) error {
	if len(ps) == 1 || err == nil {
		return err
	}
	return fmt.Errorf("partition %d: %w", p, err)
}

// groups splits n items, item i of ID id(i), by partition: the partitions
// in the order of their first item, each with its items' indices in order.
func groups(ps []*part, n int, id func(int) string) (order []int, idx map[int][]int) {
	idx = make(map[int][]int)
	for i := range n {
		p := engine.Partition(id(i), len(ps))
		if _, ok := idx[p]; !ok {
			order = append(order, p)
		}
		idx[p] = append(idx[p], i)
	}
	return order, idx
}

// inParallel runs f for each partition of order at once (the first in
// the calling goroutine) and returns the error of the first partition in
// order that failed, once every call has returned.
func inParallel(order []int, f func(q int) error) error {
	if len(order) == 0 {
		return nil
	}
	errs := make([]error, len(order))
	var wg sync.WaitGroup
	for k, q := range order[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k+1] = f(q)
		}()
	}
	errs[0] = f(order[0])
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// adds is 1 when one of the outcomes at the indices is adds tasks, else 0.
func adds(p engine.FinishParams, is []int) int {
	for _, i := range is {
		if len(p.Outcomes[i].Add) > 0 {
			return 1
		}
	}
	return 0
}

// each runs f on every partition in order, stopping at the first error
// (which names its partition).
func (s *Store) each(ctx context.Context, f func(p *part) error) error {
	ps, err := s.layout(ctx)
	if err != nil {
		return err
	}
	for q, p := range ps {
		if err := f(p); err != nil {
			return partErr(ps, q, err)
		}
	}
	return nil
}

// mergeQueues merges the partitions' queue lists (each by name).
func mergeQueues(lists [][]weir.QueueInfo) []weir.QueueInfo {
	byName := map[string]int{}
	out := []weir.QueueInfo{} // as one partition's reply: empty, not nil
	for _, l := range lists {
		for _, qi := range l {
			i, ok := byName[qi.Name]
			if !ok {
				byName[qi.Name] = len(out)
				out = append(out, qi)
				continue
			}
			out[i].Ready += qi.Ready
			out[i].Delayed += qi.Delayed
			out[i].Running += qi.Running
		}
	}
	sortQueues(out)
	return out
}

// schedulePart returns the part of schedule name.
func (s *Store) schedulePart(ctx context.Context, name string) (*part, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return nil, err
	}
	return at(ps, name), nil
}

var _ engine.ScheduleWatcher = (*Store)(nil)

// sortQueues sorts queues by name, in byte order (reply.lua's queues).
func sortQueues(qs []weir.QueueInfo) {
	slices.SortFunc(qs, func(a, b weir.QueueInfo) int { return strings.Compare(a.Name, b.Name) })
}
