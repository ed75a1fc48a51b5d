package deepcopy

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

type node struct {
	id    int
	next  *node
	kids  []*node
	vals  []int32 // often a subslice of a shared arena
	first *int32  // often into vals
	m     map[int]*node
	any   any
	name  string
	pair  [2]*node
	long  [20]*node
}

// digest prints a graph from n, naming each node by the order first met
// and each pointer into a slice by its offset, so two graphs print the
// same exactly when they are equal with the same aliasing.
func digest(n *node) string {
	var b strings.Builder
	seen := map[*node]int{}
	arenas := map[uintptr]string{}
	var visit func(n *node) string
	visit = func(n *node) string {
		if n == nil {
			return "nil"
		}
		if k, ok := seen[n]; ok {
			return fmt.Sprintf("#%d", k)
		}
		k := len(seen)
		seen[n] = k
		fmt.Fprintf(&b, "node #%d id=%d name=%q vals=%v len=%d cap=%d", k, n.id, n.name, n.vals, len(n.vals), cap(n.vals))
		if cap(n.vals) > 0 {
			end := uintptr(unsafe.Pointer(unsafe.SliceData(n.vals))) + uintptr(cap(n.vals))*4
			if _, ok := arenas[end]; !ok {
				arenas[end] = fmt.Sprintf("arena%d", len(arenas))
			}
			fmt.Fprintf(&b, " in %s", arenas[end])
		}
		if n.first != nil {
			fmt.Fprintf(&b, " first=%d at vals[%d]", *n.first, (uintptr(unsafe.Pointer(n.first))-uintptr(unsafe.Pointer(unsafe.SliceData(n.vals))))/4)
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, " next=%s pair=%s,%s", visit(n.next), visit(n.pair[0]), visit(n.pair[1]))
		for _, x := range n.long {
			fmt.Fprintf(&b, " %s", visit(x))
		}
		for _, x := range n.kids {
			fmt.Fprintf(&b, " kid=%s", visit(x))
		}
		for i := range 10 {
			if x, ok := n.m[i]; ok {
				fmt.Fprintf(&b, " m[%d]=%s", i, visit(x))
			}
		}
		switch a := n.any.(type) {
		case *node:
			fmt.Fprintf(&b, " any=%s", visit(a))
		case [1]*node:
			fmt.Fprintf(&b, " any=[%s]", visit(a[0]))
		case nil:
		default:
			fmt.Fprintf(&b, " any=%v", a)
		}
		fmt.Fprintf(&b, " nilkids=%v nilm=%v\n", n.kids == nil, n.m == nil)
		return fmt.Sprintf("#%d", k)
	}
	visit(n)
	return b.String()
}

// randomGraph builds a graph of n nodes with every kind of sharing.
func randomGraph(rng *rand.Rand, n int) *node {
	arena := make([]int32, 64)
	for i := range arena {
		arena[i] = int32(i)
	}
	nodes := make([]*node, n)
	for i := range nodes {
		nodes[i] = &node{id: i, name: fmt.Sprint("n", i)}
	}
	pick := func() *node {
		if rng.IntN(5) == 0 {
			return nil
		}
		return nodes[rng.IntN(n)]
	}
	shared := map[int]*node{1: nodes[0]}
	for _, x := range nodes {
		x.next, x.pair = pick(), [2]*node{pick(), pick()}
		x.long[rng.IntN(20)] = pick()
		switch rng.IntN(3) {
		case 0:
			lo := rng.IntN(60)
			x.vals = arena[lo : lo+rng.IntN(64-lo)]
		case 1:
			x.vals = make([]int32, rng.IntN(3), 4)
		}
		if len(x.vals) > 0 {
			x.first = &x.vals[rng.IntN(len(x.vals))]
		}
		switch rng.IntN(4) {
		case 0:
			x.kids = []*node{}
		case 1:
			x.kids = []*node{pick(), pick(), pick()}[:rng.IntN(4)]
		}
		switch rng.IntN(3) {
		case 0:
			x.m = shared
		case 1:
			x.m = map[int]*node{rng.IntN(10): pick(), rng.IntN(10): pick()}
		}
		switch rng.IntN(4) {
		case 0:
			x.any = pick()
		case 1:
			x.any = [1]*node{pick()}
		case 2:
			x.any = rng.IntN(100)
		}
	}
	return nodes[0]
}

func TestCopy_RandomGraphsKeepTheirShape(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		g := randomGraph(rng, 1+rng.IntN(30))
		before := digest(g)
		c, err := Copy(&Copier{}, g)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if got := digest(c); got != before {
			t.Fatalf("seed %d: copy differs:\n%s\nwant:\n%s", seed, got, before)
		}
		// The copy shares nothing mutable: changing all of it leaves the
		// original as it was.
		mutate(c)
		if got := digest(g); got != before {
			t.Fatalf("seed %d: changing the copy changed the original", seed)
		}
	}
}

func mutate(n *node) {
	seen := map[*node]bool{}
	var visit func(n *node)
	visit = func(n *node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		n.id += 1000
		for i := range n.vals[:cap(n.vals)] {
			n.vals[:cap(n.vals)][i] = -1
		}
		for k := range n.m {
			n.m[k] = nil
		}
		for i := range n.kids[:cap(n.kids)] {
			n.kids[:cap(n.kids)][i] = nil
		}
		if p, ok := n.any.(*node); ok {
			visit(p)
		}
		visit(n.next)
		visit(n.pair[0])
		visit(n.pair[1])
	}
	// visit before clearing: gather first, then change
	var all []*node
	var gather func(n *node)
	gather = func(n *node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		all = append(all, n)
		gather(n.next)
		gather(n.pair[0])
		gather(n.pair[1])
		for _, x := range n.long {
			gather(x)
		}
		for _, x := range n.kids {
			gather(x)
		}
		for _, x := range n.m {
			gather(x)
		}
		switch a := n.any.(type) {
		case *node:
			gather(a)
		case [1]*node:
			gather(a[0])
		}
	}
	gather(n)
	clear(seen)
	for _, x := range all {
		visit(x)
	}
}

func TestCopy_PointerIntoAStructField(t *testing.T) {
	type inner struct{ a, b int }
	type outer struct {
		in  inner
		pin *inner
		pb  *int
	}
	o := &outer{in: inner{1, 2}}
	o.pin, o.pb = &o.in, &o.in.b
	c, err := Copy(&Copier{}, o)
	if err != nil {
		t.Fatal(err)
	}
	if c == o || c.pin != &c.in || c.pb != &c.in.b || c.in != (inner{1, 2}) {
		t.Fatalf("aliasing lost: %+v", c)
	}
}

func TestCopy_ShareKeepsTheOriginal(t *testing.T) {
	type cfg struct{ xs []int }
	type eng struct {
		cfg  *cfg
		own  []int
		copy cfg // held by value: its slice is shared too
	}
	conf := &cfg{xs: []int{1}}
	e := &eng{cfg: conf, own: []int{2}, copy: cfg{xs: []int{3}}}
	c := &Copier{}
	c.Share(reflect.TypeFor[cfg]())
	got, err := Copy(c, e)
	if err != nil {
		t.Fatal(err)
	}
	if got.cfg != conf || &got.copy.xs[0] != &e.copy.xs[0] || &got.own[0] == &e.own[0] {
		t.Fatalf("share rules not kept")
	}
}

func TestCopy_CustomIsCalledOncePerPointee(t *testing.T) {
	type table struct{ n int }
	type eng struct{ a, b *table }
	tb := &table{n: 7}
	calls := 0
	c := &Copier{}
	c.Custom(reflect.TypeFor[table](), func(p unsafe.Pointer) unsafe.Pointer {
		calls++
		cp := *(*table)(p)
		cp.n++
		return unsafe.Pointer(&cp)
	})
	got, err := Copy(c, &eng{a: tb, b: tb})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || got.a != got.b || got.a == tb || got.a.n != 8 {
		t.Fatalf("calls=%d a=%p b=%p", calls, got.a, got.b)
	}
	type byValue struct{ t table }
	if _, err := Copy(c, &byValue{}); err == nil {
		t.Fatal("a custom type held by value was copied")
	}
}

func TestCopy_Refuses(t *testing.T) {
	arena := make([]int, 8)
	f := func() {}
	for name, root := range map[string]any{
		"func":    &struct{ f func() }{f},
		"chan":    &struct{ c chan int }{make(chan int)},
		"unsafe":  &struct{ p unsafe.Pointer }{unsafe.Pointer(&arena[0])},
		"overlap": &struct{ a, b []int }{arena[0:4:4], arena[2:6:6]},
	} {
		if _, err := Copy(&Copier{}, root); err == nil {
			t.Errorf("%s: copied", name)
		}
	}
	// nil ones are fine
	if _, err := Copy(&Copier{}, &struct {
		f func()
		c chan int
	}{}); err != nil {
		t.Error(err)
	}
}

func TestCopy_GenericsAndValues(t *testing.T) {
	type box[T any] struct {
		v    T
		next *box[T]
	}
	b := &box[[]string]{v: []string{"a"}}
	b.next = b
	c, err := Copy(&Copier{}, b)
	if err != nil {
		t.Fatal(err)
	}
	if c.next != c || c == b || c.v[0] != "a" || &c.v[0] == &b.v[0] {
		t.Fatal("generic cycle not copied")
	}
	m, err := Copy(&Copier{}, map[string][]int{"x": {1}})
	if err != nil || m["x"][0] != 1 {
		t.Fatal(m, err)
	}
	n, err := Copy(&Copier{}, 5)
	if err != nil || n != 5 {
		t.Fatal(n, err)
	}
}

func TestCopy_LongListNeedsNoDeepStack(t *testing.T) {
	var head *node
	for i := range 200000 {
		head = &node{id: i, next: head}
	}
	c, err := Copy(&Copier{}, head)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for p, q := head, c; p != nil; p, q = p.next, q.next {
		if p == q || p.id != q.id {
			t.Fatal("list copied wrong")
		}
		n++
	}
	if n != 200000 {
		t.Fatal(n)
	}
}

// TestCopy_RegionsOfOneTypeStayApart: the copies of the regions of one
// type share one allocation, so this checks that each keeps its own
// capacity: appending to one copied slice, within its capacity and past
// it, leaves the other copied slices (its neighbours there) as they were.
func TestCopy_RegionsOfOneTypeStayApart(t *testing.T) {
	type rec struct{ a, b, c []int32 }
	in := &rec{a: make([]int32, 2, 4), b: []int32{7, 8, 9}, c: make([]int32, 1, 1)}
	in.a[0], in.a[1], in.c[0] = 1, 2, 5
	out, err := Copy(&Copier{}, in)
	if err != nil {
		t.Fatal(err)
	}
	if cap(out.a) != 4 || cap(out.b) != 3 || cap(out.c) != 1 {
		t.Fatalf("capacities %d %d %d, want 4 3 1", cap(out.a), cap(out.b), cap(out.c))
	}
	out.a = append(out.a, 100, 101) // within its capacity
	out.c = append(out.c, 102)      // past it
	out.b = append(out.b, 103)      // past it
	if !slices.Equal(out.b[:3], []int32{7, 8, 9}) || out.c[0] != 5 || !slices.Equal(out.a, []int32{1, 2, 100, 101}) {
		t.Errorf("copies after appends: %v %v %v", out.a, out.b, out.c)
	}
	if !slices.Equal(in.a[:4], []int32{1, 2, 0, 0}) || !slices.Equal(in.b, []int32{7, 8, 9}) || !slices.Equal(in.c, []int32{5}) {
		t.Errorf("the original changed: %v %v %v", in.a[:4], in.b, in.c)
	}
}

// TestCopy_ArenaSlices: slices cut end to end from one array (an engine's
// per-request lists: arena[i:i:i+2]) are copied as one region, with
// strings (a type the collector scans) and without (plain memory), and
// twice-noted regions (a slice and a reslice of it) still share their
// copy: each copied slice keeps its capacity, a write through one shows in
// the slices that alias it and not in its neighbours, and the original
// stays as it was.
func TestCopy_ArenaSlices(t *testing.T) {
	type named struct {
		name string
		n    int32
	}
	type rec struct {
		nums  []int32
		names []named
		again []int32 // a reslice of nums
	}
	nums := make([]int32, 12)
	names := make([]named, 12)
	recs := make([]rec, 6)
	for i := range recs {
		recs[i].nums = nums[2*i : 2*i+1 : 2*i+2]
		recs[i].names = names[2*i : 2*i+1 : 2*i+2]
		recs[i].nums[0], recs[i].names[0] = int32(i), named{fmt.Sprint("r", i), int32(i)}
		if i%2 == 0 {
			recs[i].again = recs[i].nums[:2]
		}
	}
	c := &Copier{}
	out, err := Copy(c, recs)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(recs))*int64(unsafe.Sizeof(rec{})) + 12*4 + 12*int64(unsafe.Sizeof(named{})); c.Copied() != want {
		t.Errorf("copied %d bytes, want %d (the records and the two arenas once)", c.Copied(), want)
	}
	for i := range out {
		r := &out[i]
		if cap(r.nums) != 2 || cap(r.names) != 2 || r.nums[0] != int32(i) || r.names[0] != (named{fmt.Sprint("r", i), int32(i)}) {
			t.Fatalf("record %d copied as %v %v", i, r.nums[:cap(r.nums)], r.names[:cap(r.names)])
		}
		if &r.nums[0] == &recs[i].nums[0] || &r.names[0] == &recs[i].names[0] {
			t.Fatalf("record %d's lists are the original's", i)
		}
		r.nums = append(r.nums, 100+int32(i)) // within its capacity: its own second element
		r.names = append(r.names, named{"x", 1})
		if i%2 == 0 && (r.again[1] != 100+int32(i) || &r.again[0] != &r.nums[0]) {
			t.Errorf("record %d's reslice no longer aliases its list: %v", i, r.again)
		}
	}
	for i := range out {
		if out[i].nums[0] != int32(i) || out[i].names[0].name != fmt.Sprint("r", i) {
			t.Errorf("record %d was overwritten by a neighbour's append: %v %v", i, out[i].nums, out[i].names)
		}
		if recs[i].nums[:2][1] != 0 || recs[i].names[:2][1] != (named{}) {
			t.Errorf("the original's record %d changed", i)
		}
	}
}

// TestSortKeys: the radix sort of the regions' keys orders them as a
// comparison sort by start, then by end from the largest, does: random
// keys spread over the whole address range, and keys that share their
// high bytes and often their start.
func TestSortKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		n := rng.IntN(300)
		keys := make([]key, n)
		for i := range keys {
			start := uintptr(rng.Uint64())
			if round%2 == 1 {
				start = 0xc000_0000 + uintptr(rng.IntN(64))*8
			}
			keys[i] = key{start, start + uintptr(rng.IntN(100)), int32(i)}
		}
		want := slices.Clone(keys)
		slices.SortStableFunc(want, func(a, b key) int {
			if c := cmp.Compare(a.start, b.start); c != 0 {
				return c
			}
			return cmp.Compare(b.end, a.end)
		})
		got := sortKeys(keys)
		for i := range got {
			if got[i].start != want[i].start || got[i].end != want[i].end {
				t.Fatalf("round %d: key %d is %+v, want %+v", round, i, got[i], want[i])
			}
		}
	}
}
