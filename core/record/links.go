package record

import "slices"

// links is a doubly linked queue threaded through index arrays (-1 ends
// it), the shape both rebuilt states need for their eviction orders: O(1)
// unlink of any member and a walk from the head.
type links struct {
	prev, next []int32
	head, tail int32
}

func newLinks(n int) links {
	l := links{prev: make([]int32, n), next: make([]int32, n)}
	l.reset()
	return l
}

// reset empties the queue, keeping its storage.
func (l *links) reset() {
	for i := range l.prev {
		l.prev[i], l.next[i] = -1, -1
	}
	l.head, l.tail = -1, -1
}

// grow makes room for one more member index, unlinked.
func (l *links) grow() {
	l.prev = append(l.prev, -1)
	l.next = append(l.next, -1)
}

func (l links) clone() links {
	l.prev = slices.Clone(l.prev)
	l.next = slices.Clone(l.next)
	return l
}

func (l *links) pushBack(i int32) {
	l.prev[i], l.next[i] = l.tail, -1
	if l.tail >= 0 {
		l.next[l.tail] = i
	} else {
		l.head = i
	}
	l.tail = i
}

func (l *links) unlink(i int32) {
	p, n := l.prev[i], l.next[i]
	if p >= 0 {
		l.next[p] = n
	} else {
		l.head = n
	}
	if n >= 0 {
		l.prev[n] = p
	} else {
		l.tail = p
	}
	l.prev[i], l.next[i] = -1, -1
}
