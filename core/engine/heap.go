package engine

// minHeap is a binary min-heap over a value type that orders itself. It is
// typed rather than container/heap so pushes box nothing and allocate only
// when the slice grows; the engine keeps its pending arrivals and its
// in-flight P/D handoffs in one each.
type minHeap[T interface{ before(T) bool }] []T

func (h *minHeap[T]) push(x T) {
	*h = append(*h, x)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !a[i].before(a[p]) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *minHeap[T]) pop() T {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && a[l].before(a[m]) {
			m = l
		}
		if l+1 < n && a[l+1].before(a[m]) {
			m = l + 1
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}

// reheap restores the heap order after keys changed in place (an agentic
// profile's idle guard moves timers).
func (h *minHeap[T]) reheap() {
	a := *h
	*h = (*h)[:0]
	for _, x := range a {
		h.push(x)
	}
}
