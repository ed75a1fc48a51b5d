// Package deepcopy copies a graph of Go values. Every object reachable
// from a root is copied once, and the pointers, slices and maps of the copy
// point into the copy wherever the original's pointed into the original:
// into the middle of an array or a struct, into one backing array from
// several slices, around cycles. Engine checkpoints use it
// (docs/model/engine.md ("Checkpoints")), so that adding a field to the
// engine never needs a copy method to be kept in step.
//
// It works on memory as the Go runtime lays it out, with reflect and
// unsafe. A pointer names a region of memory (its pointee), a slice another
// (its backing array up to its capacity); a region inside another is copied
// as part of the outer one, so aliasing survives. Strings are shared (they
// never change). What cannot be copied faithfully is refused with an
// error, never copied wrong: channels, unsafe pointers, non-nil functions,
// and two regions that overlap without one holding the other.
//
// A Copier says which types are shared rather than copied (Share) and
// which are copied by a function of their own (Custom).
package deepcopy

import (
	"cmp"
	"fmt"
	"math/bits"
	"reflect"
	"slices"
	"unsafe"
)

// A Copier holds the rules of a copy; its zero value copies everything.
// It is not safe for concurrent use. Reusing one for copies of the same
// kind of graph saves working out each type's layout again and sizes the
// next copy's tables from the last.
type Copier struct {
	shared map[reflect.Type]bool
	custom map[reflect.Type]func(unsafe.Pointer) unsafe.Pointer
	infos  map[reflect.Type]*info
	copied int64
	last   int // regions of the last copy
}

// Copied is the bytes the last Copy allocated for its copies of pointees
// and backing arrays (maps, interface boxes and custom copies aside).
func (c *Copier) Copied() int64 { return c.copied }

// Share makes values of type t shared by the copy: a pointer to a t keeps
// pointing to the original, a t held by value keeps what it points to.
// For what a run never changes (its config, its input).
func (c *Copier) Share(t reflect.Type) {
	if c.shared == nil {
		c.shared = map[reflect.Type]bool{}
	}
	c.shared[t] = true
	c.infos = nil
}

// Custom makes f copy every t reached through a pointer: f gets the
// original's address and returns the copy's; each original is copied once.
// A t held by value (in a struct, an array or a slice) is refused.
func (c *Copier) Custom(t reflect.Type, f func(unsafe.Pointer) unsafe.Pointer) {
	if c.custom == nil {
		c.custom = map[reflect.Type]func(unsafe.Pointer) unsafe.Pointer{}
	}
	c.custom[t] = f
	c.infos = nil
}

// Copy returns a copy of root and of everything it reaches (see the
// package comment), or an error naming what could not be copied.
func Copy[T any](c *Copier, root T) (T, error) {
	var zero T
	t := c.info(reflect.TypeFor[T]())
	s := &copying{c: c, scanned: make(map[regionKey]int, c.last), regions: make([]region, 0, c.last),
		maps: map[unsafe.Pointer]reflect.Value{}, customs: map[unsafe.Pointer]unsafe.Pointer{}}
	old := new(T)
	*old = root
	s.walk(unsafe.Pointer(old), t, s.scan)
	s.drain()
	if s.err != nil {
		return zero, s.err
	}
	c.last = len(s.regions)
	if err := s.merge(); err != nil {
		return zero, err
	}
	s.copyRegions()
	out := new(T)
	*out = root
	s.walk(unsafe.Pointer(out), t, s.fix)
	if s.err != nil {
		return zero, s.err
	}
	return *out, nil
}

// info is what a copy needs to know of a type, worked out once per
// Copier: its rules, its size, what its pointers and slices point to, and
// its plan (the words of its layout that may point somewhere).
type info struct {
	t       reflect.Type
	kind    reflect.Kind
	size    uintptr
	shared  bool
	custom  func(unsafe.Pointer) unsafe.Pointer
	elem    *info        // a pointer's, slice's or array's element
	slice   reflect.Type // []t, for the copies of regions of t
	plan    []leaf
	planned bool
	// bare: t holds no pointer the collector follows (strings are
	// pointers), so its copies are plain memory moves.
	bare bool
	// arena is where copyRegions puts this copy's regions of t.
	arena *arena
}

// A leaf is a word of a type's layout that may point somewhere: a
// pointer, slice, map, interface, function, channel or unsafe pointer, a
// long array of values holding such words, or a custom type held by value.
type leaf struct {
	off uintptr
	t   *info
}

// info returns t's info, its plan not worked out yet (planOf).
func (c *Copier) info(t reflect.Type) *info {
	if in, ok := c.infos[t]; ok {
		return in
	}
	if c.infos == nil {
		c.infos = map[reflect.Type]*info{}
	}
	in := &info{t: t, kind: t.Kind(), size: t.Size(), shared: c.shared[t], custom: c.custom[t], bare: bare(t)}
	c.infos[t] = in // before its element's: a type may point to itself
	switch in.kind {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		in.elem = c.info(t.Elem())
	}
	return in
}

// bare tells whether values of t hold no pointer at all.
func bare(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if !bare(t.Field(i).Type) {
				return false
			}
		}
		return true
	case reflect.Array:
		return t.Len() == 0 || bare(t.Elem())
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	}
	return false
}

// planOf is in's leaves, in memory order; nil when a value of in's type
// points nowhere the copy must follow.
func (c *Copier) planOf(in *info) []leaf {
	if !in.planned {
		in.planned = true
		c.flatten(in, 0, &in.plan)
	}
	return in.plan
}

// shortArray is the longest array whose elements' leaves are listed one by
// one in a plan; a longer one is a leaf walked element by element.
const shortArray = 8

func (c *Copier) flatten(in *info, off uintptr, p *[]leaf) {
	switch {
	case in.shared:
		return
	case in.custom != nil:
		*p = append(*p, leaf{off, in})
		return
	}
	switch in.kind {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		*p = append(*p, leaf{off, in})
	case reflect.Struct:
		for i := range in.t.NumField() {
			f := in.t.Field(i)
			c.flatten(c.info(f.Type), off+f.Offset, p)
		}
	case reflect.Array:
		ep := c.planOf(in.elem)
		switch n := in.t.Len(); {
		case len(ep) == 0 || n == 0:
		case n <= shortArray:
			for i := range n {
				for _, l := range ep {
					*p = append(*p, leaf{off + uintptr(i)*in.elem.size + l.off, l.t})
				}
			}
		default:
			*p = append(*p, leaf{off, in})
		}
	}
}

// walk calls f for each leaf of the in at p, long arrays element by element.
func (s *copying) walk(p unsafe.Pointer, in *info, f func(unsafe.Pointer, *info)) {
	for _, l := range s.c.planOf(in) {
		q := unsafe.Add(p, l.off)
		if l.t.kind == reflect.Array && l.t.custom == nil {
			for i := range l.t.t.Len() {
				s.walk(unsafe.Add(q, uintptr(i)*l.t.elem.size), l.t.elem, f)
			}
			continue
		}
		f(q, l.t)
	}
}

// copying is the state of one Copy.
type copying struct {
	c *Copier
	// scanned is, per region start and element type, how many elements
	// were scanned; todo the regions still to scan.
	scanned map[regionKey]int
	todo    []region
	regions []region
	// outers are the regions no other holds, sorted, each with its copy.
	outers  []region
	maps    map[unsafe.Pointer]reflect.Value // original -> copy (nil value: scanned, not copied yet)
	customs map[unsafe.Pointer]unsafe.Pointer
	err     error
}

// A region is n elements of type elem from start: a pointee, or a slice's
// backing array up to its capacity.
type region struct {
	start unsafe.Pointer
	end   uintptr
	elem  *info
	n     int
	from  int            // the first element still to scan (todo)
	copy  unsafe.Pointer // the copy's start (outers)
}

type regionKey struct {
	start unsafe.Pointer
	elem  *info
}

func (s *copying) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("deepcopy: "+format, args...)
	}
}

// scan notes the regions the leaf at p of type in points to.
func (s *copying) scan(p unsafe.Pointer, in *info) {
	if s.err != nil {
		return
	}
	if in.custom != nil {
		s.fail("%v held by value has a custom copy", in.t)
		return
	}
	switch in.kind {
	case reflect.Pointer:
		s.pointee(*(*unsafe.Pointer)(p), in.elem)
	case reflect.Slice:
		h := (*sliceHeader)(p)
		if h.cap > 0 {
			s.region(h.data, in.elem, h.cap)
		}
	case reflect.Map:
		s.scanMap(p, in)
	case reflect.Interface:
		v, dt, box := s.dynamic(p, in)
		switch {
		case dt == nil:
		case dt.kind == reflect.Pointer:
			s.pointee(v.Elem().UnsafePointer(), dt.elem)
		case box.IsValid():
			s.walk(box.UnsafePointer(), dt, s.scan)
		}
	default: // func, chan, unsafe pointer
		if *(*unsafe.Pointer)(p) != nil {
			s.fail("cannot copy a %v", in.t)
		}
	}
}

// dynamic is the interface at p (of type in), its dynamic type (nil when
// the interface is nil) and, when that type is not a pointer and points
// somewhere, a pointer to an addressable copy of its value.
func (s *copying) dynamic(p unsafe.Pointer, in *info) (v reflect.Value, dt *info, box reflect.Value) {
	v = reflect.NewAt(in.t, p).Elem()
	if v.IsNil() {
		return v, nil, box
	}
	d := v.Elem()
	dt = s.c.info(d.Type())
	if dt.kind != reflect.Pointer && len(s.c.planOf(dt)) > 0 {
		box = reflect.New(dt.t)
		box.Elem().Set(d)
	}
	return v, dt, box
}

type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// pointee notes the region of a pointer to an elem.
func (s *copying) pointee(q unsafe.Pointer, elem *info) {
	switch {
	case q == nil || elem.shared || elem.size == 0:
	case elem.custom != nil:
		if _, ok := s.customs[q]; !ok {
			s.customs[q] = elem.custom(q)
		}
	default:
		s.region(q, elem, 1)
	}
}

// region notes n elems from start, to be scanned (drain) and copied.
func (s *copying) region(start unsafe.Pointer, elem *info, n int) {
	if elem.shared || elem.size == 0 {
		return
	}
	if elem.custom != nil {
		s.fail("%v held by value has a custom copy", elem.t)
		return
	}
	if len(s.c.planOf(elem)) == 0 {
		// Nothing in it to scan: merge drops a region noted twice. (An
		// engine's request records hold 36,000 such slices.)
		s.regions = append(s.regions, region{start: start, end: uintptr(start) + uintptr(n)*elem.size, elem: elem, n: n})
		return
	}
	k := regionKey{start, elem}
	done, seen := s.scanned[k]
	if seen && done >= n {
		return
	}
	s.scanned[k] = n
	r := region{start: start, end: uintptr(start) + uintptr(n)*elem.size, elem: elem, n: n, from: done}
	s.regions = append(s.regions, r)
	if len(s.c.planOf(elem)) > 0 {
		s.todo = append(s.todo, r)
	}
}

// drain scans the regions noted, and those they point to, until none is
// left (a work list rather than recursion: a long linked list is fine).
func (s *copying) drain() {
	for len(s.todo) > 0 && s.err == nil {
		r := s.todo[len(s.todo)-1]
		s.todo = s.todo[:len(s.todo)-1]
		for i := r.from; i < r.n; i++ {
			s.walk(unsafe.Add(r.start, uintptr(i)*r.elem.size), r.elem, s.scan)
		}
	}
}

// scanMap notes a map, and scans its keys and values.
func (s *copying) scanMap(p unsafe.Pointer, in *info) {
	m := *(*unsafe.Pointer)(p)
	if m == nil {
		return
	}
	if _, ok := s.maps[m]; ok {
		return
	}
	s.maps[m] = reflect.Value{}
	kt, vt := s.c.info(in.t.Key()), s.c.info(in.t.Elem())
	kw, vw := len(s.c.planOf(kt)) > 0, len(s.c.planOf(vt)) > 0
	if !kw && !vw {
		return
	}
	tk, tv := reflect.New(kt.t), reflect.New(vt.t)
	for it := reflect.NewAt(in.t, p).Elem().MapRange(); it.Next(); {
		if kw {
			tk.Elem().SetIterKey(it)
			s.walk(tk.UnsafePointer(), kt, s.scan)
		}
		if vw {
			tv.Elem().SetIterValue(it)
			s.walk(tv.UnsafePointer(), vt, s.scan)
		}
	}
}

// merge sorts the regions and keeps those no other holds, refusing two
// that overlap without one holding the other. It sorts small keys, not
// the regions: a Mooncake engine has about 36,000 regions.
func (s *copying) merge() error {
	keys := make([]key, len(s.regions))
	for i, r := range s.regions {
		keys[i] = key{uintptr(r.start), r.end, int32(i)}
	}
	for _, k := range sortKeys(keys) {
		r := s.regions[k.i]
		n := len(s.outers) - 1
		if n >= 0 && uintptr(r.start) < s.outers[n].end {
			if o := s.outers[n]; r.end > o.end {
				return fmt.Errorf("deepcopy: %d %v overlap %d %v without either holding the other", r.n, r.elem.t, o.n, o.elem.t)
			}
			continue
		}
		if n >= 0 && uintptr(r.start) == s.outers[n].end && r.elem == s.outers[n].elem {
			// Regions of one type end to end (slices of one arena) are
			// copied as one: the slices keep their own capacities.
			s.outers[n].end, s.outers[n].n = r.end, s.outers[n].n+r.n
			continue
		}
		s.outers = append(s.outers, r)
	}
	s.regions = nil
	return nil
}

// A key is a region's place in memory and its index in copying.regions.
type key struct {
	start, end uintptr
	i          int32
}

// sortKeys returns keys ordered by start, and those with one start by end
// from the largest (the outer region first). It sorts by start with a
// least significant digit radix sort, a byte a pass, skipping the bytes
// every start shares (a comparison sort of a Mooncake engine's 36,000
// regions was a fifth of a copy under wasm, where the comparison is a
// call), then each run of equal starts by end. keys is reused.
func sortKeys(keys []key) []key {
	var or, and uintptr = 0, ^uintptr(0)
	for _, k := range keys {
		or, and = or|k.start, and&k.start
	}
	tmp := make([]key, len(keys))
	for shift := 0; shift < bits.UintSize; shift += 8 {
		if (or^and)>>shift&0xff == 0 {
			continue // every start has this byte
		}
		var at [257]int
		for _, k := range keys {
			at[k.start>>shift&0xff+1]++
		}
		for b := 1; b < len(at); b++ {
			at[b] += at[b-1]
		}
		for _, k := range keys {
			d := k.start >> shift & 0xff
			tmp[at[d]] = k
			at[d]++
		}
		keys, tmp = tmp, keys
	}
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j].start == keys[i].start {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(keys[i:j], func(a, b key) int { return cmp.Compare(b.end, a.end) })
		}
		i = j
	}
	return keys
}

// copyRegions allocates the copies of the outer regions, one array per
// element type that the regions of that type share (one allocation per
// type, not per region: a Mooncake engine has about 36,000 regions,
// mostly small slices of its request records), copies their memory, and
// points their leaves into the copy. A region's copy keeps its capacity,
// so an append past it reallocates rather than writing into the next.
func (s *copying) copyRegions() {
	s.c.copied = 0
	var order []*info
	for _, o := range s.outers {
		a := o.elem.arena
		if a == nil {
			a = &arena{}
			o.elem.arena = a
			order = append(order, o.elem)
		}
		a.n += o.n
		s.c.copied += int64(o.end - uintptr(o.start))
	}
	defer func() {
		for _, elem := range order {
			elem.arena = nil
		}
	}()
	for _, elem := range order {
		if elem.slice == nil {
			elem.slice = reflect.SliceOf(elem.t)
		}
		a := elem.arena
		a.base = reflect.MakeSlice(elem.slice, a.n, a.n).UnsafePointer()
		if !elem.bare {
			a.dst, a.src = reflect.New(elem.slice), reflect.New(elem.slice)
		}
	}
	for i := range s.outers {
		o := &s.outers[i]
		a := o.elem.arena
		o.copy = unsafe.Add(a.base, uintptr(a.used)*o.elem.size)
		a.used += o.n
		if o.elem.bare {
			size := int(o.end - uintptr(o.start))
			copy(unsafe.Slice((*byte)(o.copy), size), unsafe.Slice((*byte)(o.start), size))
			continue
		}
		*(*sliceHeader)(a.dst.UnsafePointer()) = sliceHeader{o.copy, o.n, o.n}
		*(*sliceHeader)(a.src.UnsafePointer()) = sliceHeader{o.start, o.n, o.n}
		reflect.Copy(a.dst.Elem(), a.src.Elem())
	}
	for _, o := range s.outers {
		if len(s.c.planOf(o.elem)) == 0 {
			continue
		}
		for i := range o.n {
			s.walk(unsafe.Add(o.copy, uintptr(i)*o.elem.size), o.elem, s.fix)
		}
	}
}

// An arena is the array that one Copy's regions of one type are copied
// into; dst and src hold a []t header each for reflect.Copy (made once a
// type: reflect.NewAt a region looks its type up in a shared cache).
type arena struct {
	n, used  int
	base     unsafe.Pointer
	dst, src reflect.Value
}

// moved is where the copy holds what the original held at q.
func (s *copying) moved(q unsafe.Pointer) unsafe.Pointer {
	lo, hi := 0, len(s.outers) // the first outer starting after q
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if uintptr(s.outers[m].start) <= uintptr(q) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if i := lo - 1; i >= 0 && uintptr(q) < s.outers[i].end {
		return unsafe.Add(s.outers[i].copy, uintptr(q)-uintptr(s.outers[i].start))
	}
	s.fail("internal error: %p is in no region", q)
	return q
}

// movedPointee is the copy's pointer for a pointer q to an elem.
func (s *copying) movedPointee(q unsafe.Pointer, elem *info) unsafe.Pointer {
	switch {
	case q == nil || elem.shared || elem.size == 0:
		return q
	case elem.custom != nil:
		return s.customs[q]
	}
	return s.moved(q)
}

// fix points the leaf at p (a copy of the original's) into the copy.
func (s *copying) fix(p unsafe.Pointer, in *info) {
	switch in.kind {
	case reflect.Pointer:
		*(*unsafe.Pointer)(p) = s.movedPointee(*(*unsafe.Pointer)(p), in.elem)
	case reflect.Slice:
		h := (*sliceHeader)(p)
		if h.cap > 0 && !in.elem.shared && in.elem.size > 0 {
			h.data = s.moved(h.data)
		}
	case reflect.Map:
		v := reflect.NewAt(in.t, p).Elem()
		if !v.IsNil() {
			v.Set(s.copyMap(v))
		}
	case reflect.Interface:
		v, dt, box := s.dynamic(p, in)
		switch {
		case dt == nil:
		case dt.kind == reflect.Pointer:
			v.Set(reflect.NewAt(dt.elem.t, s.movedPointee(v.Elem().UnsafePointer(), dt.elem)))
		case box.IsValid():
			s.walk(box.UnsafePointer(), dt, s.fix)
			v.Set(box.Elem())
		}
	}
}

// copyMap returns the copy of map m, made once.
func (s *copying) copyMap(m reflect.Value) reflect.Value {
	if c := s.maps[m.UnsafePointer()]; c.IsValid() {
		return c
	}
	t := m.Type()
	c := reflect.MakeMapWithSize(t, m.Len())
	s.maps[m.UnsafePointer()] = c
	kt, vt := s.c.info(t.Key()), s.c.info(t.Elem())
	kw, vw := len(s.c.planOf(kt)) > 0, len(s.c.planOf(vt)) > 0
	tk, tv := reflect.New(kt.t), reflect.New(vt.t)
	for it := m.MapRange(); it.Next(); {
		tk.Elem().SetIterKey(it)
		tv.Elem().SetIterValue(it)
		if kw {
			s.walk(tk.UnsafePointer(), kt, s.fix)
		}
		if vw {
			s.walk(tv.UnsafePointer(), vt, s.fix)
		}
		c.SetMapIndex(tk.Elem(), tv.Elem())
	}
	return c
}
