package engine

import "github.com/weirflow/weir"
import "time"

// keyed is a queue's concurrency keys (spec/states.md, Concurrency keys):
// its keyed ready jobs, per key and all together, the rotation of keys
// that a claim serves, the keys parked at their limit, and the leases
// each key holds.
type keyed struct {
	limit int                    // most leased per key; 0: none
	ready map[string]*orderedSet // per key: (priority, pushSeq)
	all   orderedSet             // every keyed ready job: (priority, pushSeq)
	turn  int64                  // the last turn handed out
	rot   orderedSet             // keys with ready jobs under the limit: (turn, 0)
	park  orderedSet             // keys with ready jobs at the limit: (turn, 0)
	run   map[string]int         // leases held per key
}

// keys returns q's concurrency keys, made on first use.
func (q *queue) keyed() *keyed {
	if q.keys == nil {
		q.keys = &keyed{ready: map[string]*orderedSet{}, run: map[string]int{}}
	}
	return q.keys
}

// atLimit reports whether key holds as many leases as the limit allows.
func (k *keyed) atLimit(key string) bool { return k.limit > 0 && k.run[key] >= k.limit }

// queueKey puts key, which has ready jobs, at the end of the rotation, or
// parks it when it is at its limit.
func (k *keyed) queueKey(key string) {
	k.turn++
	if k.atLimit(key) {
		k.park.add(key, k.turn, 0)
	} else {
		k.rot.add(key, k.turn, 0)
	}
}

// pushKeyed makes job j (with a key) ready in q: a key that had no ready
// job joins the end of the rotation (or is parked at its limit).
func (q *queue) pushKeyed(j *job, seq int64) {
	k := q.keyed()
	set := k.ready[j.key]
	if set == nil {
		set = &orderedSet{}
		k.ready[j.key] = set
	}
	set.add(j.id, int64(j.priority), seq)
	k.all.add(j.id, int64(j.priority), seq)
	if set.Len() == 1 {
		k.queueKey(j.key)
	}
}

// unqueueKeyed takes ready job j (with a key) out of q and reports whether
// it was there; a key left without ready jobs leaves the rotation.
func (q *queue) unqueueKeyed(j *job) bool {
	k := q.keys
	if k == nil || !k.all.remove(j.id) {
		return false
	}
	set := k.ready[j.key]
	set.remove(j.id)
	if set.Len() == 0 {
		delete(k.ready, j.key)
		k.rot.remove(j.key)
		k.park.remove(j.key)
	}
	return true
}

// releaseKey frees the slot of a lease of job j that ended: a key parked
// at its limit rejoins the end of the rotation once under it.
func (q *queue) releaseKey(j *job) {
	if j.key == "" || q.keys == nil {
		return
	}
	k := q.keys
	if k.run[j.key]--; k.run[j.key] <= 0 {
		delete(k.run, j.key)
	}
	if k.park.has(j.key) && !k.atLimit(j.key) {
		k.park.remove(j.key)
		k.turn++
		k.rot.add(j.key, k.turn, 0)
	}
}

// claimKeyed leases keyed jobs of q after its unkeyed ones: one job of
// the key first in the rotation, which then goes to its end (or is
// parked at its limit, or leaves with no ready job left), until max jobs
// are claimed, the queue's limit is reached or no key is left.
func (m *Model) claimKeyed(q *queue, now int64, p ClaimParams, out []Claimed) []Claimed {
	k := q.keys
	if k == nil {
		return out
	}
	for len(out) < p.Max && (q.limit == 0 || q.active.Len() < q.limit) && q.rate.room() > 0 {
		it, ok := k.rot.min()
		if !ok {
			break
		}
		k.rot.popMin()
		key := it.id
		if k.atLimit(key) {
			// the limit was lowered since the key joined the rotation
			k.turn++
			k.park.add(key, k.turn, 0)
			continue
		}
		set := k.ready[key]
		jt := set.popMin()
		k.all.remove(jt.id)
		if j := m.jobs[jt.id]; j != nil && j.state == weir.Queued {
			out = append(out, m.lease(j, q, now, p))
			k.run[key]++
		}
		if set.Len() == 0 {
			delete(k.ready, key)
		} else {
			k.queueKey(key)
		}
	}
	return out
}

// LimitKeys sets how many jobs of each concurrency key of a queue may be
// leased at once; raising or removing it returns the keys parked at the
// old limit that are under the new one to the rotation, in the order they
// were parked.
func (m *Model) LimitKeys(now time.Time, p LimitKeysParams) error {
	if err := ValidateLimitKeys(p); err != nil {
		return err
	}
	m.tick(now)
	k := m.queue(p.Queue).keyed()
	k.limit = p.Concurrency
	for _, it := range k.park.sorted() {
		if !k.atLimit(it.id) {
			k.park.remove(it.id)
			k.turn++
			k.rot.add(it.id, k.turn, 0)
		}
	}
	return nil
}

// ValidateLimitKeys checks LimitKeysParams: a valid queue name, a limit in
// [0, MaxConcurrency].
func ValidateLimitKeys(p LimitKeysParams) error {
	if !ValidName(p.Queue) {
		return invalid("", "queue", "queue name %q must "+NameRule, p.Queue)
	}
	if p.Concurrency < 0 || p.Concurrency > MaxConcurrency {
		return invalid("", "concurrency", "%d is outside [0, %d]", p.Concurrency, MaxConcurrency)
	}
	return nil
}

// LimitKeysParams sets a queue's per-key limit.
type LimitKeysParams struct {
	Queue string
	// Concurrency is the most jobs of one concurrency key of the queue
	// leased at once, 0 to MaxConcurrency; 0 removes the limit.
	Concurrency int
}

// keyedReady returns the number of q's keyed ready jobs.
func (q *queue) keyedReady() int {
	if q.keys == nil {
		return 0
	}
	return q.keys.all.Len()
}

// keyLimit returns q's per-key limit.
func (q *queue) keyLimit() int {
	if q.keys == nil {
		return 0
	}
	return q.keys.limit
}

// keyedSorted returns q's keyed ready jobs by (priority, push).
func (q *queue) keyedSorted() []item {
	if q.keys == nil {
		return nil
	}
	return q.keys.all.sorted()
}
