package engine

import (
	"container/heap"
	"slices"
)

// item is one member of an ordered set: ordered by (a, b, id).
type item struct {
	id   string
	a, b int64
}

func (x item) less(y item) bool {
	if x.a != y.a {
		return x.a < y.a
	}
	if x.b != y.b {
		return x.b < y.b
	}
	return x.id < y.id
}

// orderedSet is a min-heap of items with removal by ID: the model's stand-in
// for a Redis sorted set. Order is total, so it is deterministic.
type orderedSet struct {
	items []item
	pos   map[string]int
}

func (h *orderedSet) Len() int           { return len(h.items) }
func (h *orderedSet) Less(i, j int) bool { return h.items[i].less(h.items[j]) }
func (h *orderedSet) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i].id] = i
	h.pos[h.items[j].id] = j
}
func (h *orderedSet) Push(x any) {
	it := x.(item)
	h.pos[it.id] = len(h.items)
	h.items = append(h.items, it)
}
func (h *orderedSet) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	delete(h.pos, it.id)
	return it
}

// add inserts id, or moves it when already present.
func (h *orderedSet) add(id string, a, b int64) {
	if h.pos == nil {
		h.pos = map[string]int{}
	}
	if i, ok := h.pos[id]; ok {
		h.items[i].a, h.items[i].b = a, b
		heap.Fix(h, i)
		return
	}
	heap.Push(h, item{id: id, a: a, b: b})
}

// remove deletes id and reports whether it was there.
func (h *orderedSet) remove(id string) bool {
	i, ok := h.pos[id]
	if !ok {
		return false
	}
	heap.Remove(h, i)
	return true
}

func (h *orderedSet) has(id string) bool { _, ok := h.pos[id]; return ok }

// min returns the smallest item without removing it.
func (h *orderedSet) min() (item, bool) {
	if len(h.items) == 0 {
		return item{}, false
	}
	return h.items[0], true
}

// popMin removes and returns the smallest item.
func (h *orderedSet) popMin() item { return heap.Pop(h).(item) }

// sorted returns every item in order (a copy).
func (h *orderedSet) sorted() []item {
	out := slices.Clone(h.items)
	slices.SortFunc(out, func(x, y item) int {
		if x.less(y) {
			return -1
		}
		if y.less(x) {
			return 1
		}
		return 0
	})
	return out
}
