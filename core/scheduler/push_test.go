package scheduler

import (
	"slices"
	"testing"

	"github.com/kvsim/kvsim/core/request"
)

// TestPushReusesSlotsWithoutLosingEntries checks the barrier-avoiding
// appends against plain append: whatever the slot past the end held (the
// same request, another one, or nothing because the list is full), the list
// afterwards is the list with the request appended.
func TestPushReusesSlotsWithoutLosingEntries(t *testing.T) {
	a, b, c := &request.Request{Index: 0}, &request.Request{Index: 1}, &request.Request{Index: 2}
	tests := []struct {
		name string
		list []*request.Request // len is the list, cap beyond it holds stale entries
		push *request.Request
	}{
		{"full list grows", []*request.Request{a, b}, c},
		{"stale slot holds the same request", append(make([]*request.Request, 0, 4), a, b, c)[:2], c},
		{"stale slot holds another request", append(make([]*request.Request, 0, 4), a, b, a)[:2], c},
		{"empty list with a stale slot", append(make([]*request.Request, 0, 2), b)[:0], a},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := append(slices.Clone(tt.list), tt.push)
			got := tt.list
			pushReq(&got, tt.push)
			if !slices.Equal(got, want) {
				t.Errorf("pushReq: got %v, want %v", got, want)
			}

			sched := make([]Scheduled, len(tt.list), cap(tt.list))
			for i, r := range tt.list[:cap(tt.list)] {
				sched[:cap(sched)][i] = Scheduled{Req: r, Before: 7, Tokens: 7, Admitted: true}
			}
			s := Scheduled{Req: tt.push, Before: 3, Tokens: 1}
			pushScheduled(&sched, s)
			if len(sched) != len(tt.list)+1 || sched[len(sched)-1] != s {
				t.Errorf("pushScheduled: got %+v, want %+v last", sched, s)
			}
			for i, r := range tt.list {
				if sched[i].Req != r {
					t.Errorf("pushScheduled changed entry %d", i)
				}
			}
		})
	}
}
