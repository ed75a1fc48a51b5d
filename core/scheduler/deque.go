package scheduler

import "github.com/kvsim/kvsim/core/request"

// deque is a ring buffer of requests: FIFO at the back, preempted requests
// return at the front.
type deque struct {
	buf        []*request.Request
	head, size int
}

func (d *deque) len() int { return d.size }

func (d *deque) grow() {
	n := max(8, 2*len(d.buf))
	buf := make([]*request.Request, n)
	for i := 0; i < d.size; i++ {
		buf[i] = d.buf[(d.head+i)%len(d.buf)]
	}
	d.buf, d.head = buf, 0
}

func (d *deque) pushBack(r *request.Request) {
	if d.size == len(d.buf) {
		d.grow()
	}
	d.buf[(d.head+d.size)%len(d.buf)] = r
	d.size++
}

func (d *deque) pushFront(r *request.Request) {
	if d.size == len(d.buf) {
		d.grow()
	}
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = r
	d.size++
}

func (d *deque) front() *request.Request {
	if d.size == 0 {
		return nil
	}
	return d.buf[d.head]
}

func (d *deque) popFront() {
	d.buf[d.head] = nil
	d.head = (d.head + 1) % len(d.buf)
	d.size--
}

// at returns the i-th request from the front.
func (d *deque) at(i int) *request.Request { return d.buf[(d.head+i)%len(d.buf)] }

// insertBefore inserts r before the first request for which after returns
// true, or at the back.
func (d *deque) insertBefore(after func(*request.Request) bool, r *request.Request) {
	i := 0
	for ; i < d.size && !after(d.at(i)); i++ {
	}
	d.pushBack(r)
	for j := d.size - 1; j > i; j-- {
		d.buf[(d.head+j)%len(d.buf)] = d.buf[(d.head+j-1)%len(d.buf)]
	}
	d.buf[(d.head+i)%len(d.buf)] = r
}

// remove deletes the request at position i.
func (d *deque) remove(i int) {
	for j := i; j < d.size-1; j++ {
		d.buf[(d.head+j)%len(d.buf)] = d.buf[(d.head+j+1)%len(d.buf)]
	}
	d.buf[(d.head+d.size-1)%len(d.buf)] = nil
	d.size--
}
