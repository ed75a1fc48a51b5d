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
	"fmt"
	"reflect"
	"sort"
	"unsafe"
)

// A Copier holds the rules of a copy; its zero value copies everything.
// It is not safe for concurrent use.
type Copier struct {
	shared map[reflect.Type]bool
	custom map[reflect.Type]func(unsafe.Pointer) unsafe.Pointer
	plans  map[reflect.Type][]leaf
	copied int64
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
	c.plans = nil
}

// Custom makes f copy every t reached through a pointer: f gets the
// original's address and returns the copy's; each original is copied once.
// A t held by value (in a struct, an array or a slice) is refused.
func (c *Copier) Custom(t reflect.Type, f func(unsafe.Pointer) unsafe.Pointer) {
	if c.custom == nil {
		c.custom = map[reflect.Type]func(unsafe.Pointer) unsafe.Pointer{}
	}
	c.custom[t] = f
	c.plans = nil
}

// Copy returns a copy of root and of everything it reaches (see the
// package comment), or an error naming what could not be copied.
func Copy[T any](c *Copier, root T) (T, error) {
	t := reflect.TypeFor[T]()
	s := &copying{c: c, scanned: map[regionKey]int{}, maps: map[unsafe.Pointer]reflect.Value{},
		customs: map[unsafe.Pointer]unsafe.Pointer{}}
	old := new(T)
	*old = root
	s.walk(unsafe.Pointer(old), t, s.scan)
	s.drain()
	if s.err != nil {
		var zero T
		return zero, s.err
	}
	if err := s.merge(); err != nil {
		var zero T
		return zero, err
	}
	s.copyRegions()
	out := new(T)
	*out = root
	s.walk(unsafe.Pointer(out), t, s.fix)
	if s.err != nil {
		var zero T
		return zero, s.err
	}
	return *out, nil
}

// A leaf is a word of a type's layout that may point somewhere: a
// pointer, slice, map, interface, function, channel or unsafe pointer, a
// long array of values holding such words, or a custom type held by value.
type leaf struct {
	off uintptr
	t   reflect.Type
}

// plan is t's leaves, in memory order; nil when t points nowhere the copy
// must follow.
func (c *Copier) plan(t reflect.Type) []leaf {
	if p, ok := c.plans[t]; ok {
		return p
	}
	if c.plans == nil {
		c.plans = map[reflect.Type][]leaf{}
	}
	var p []leaf
	c.flatten(t, 0, &p)
	c.plans[t] = p
	return p
}

// shortArray is the longest array whose elements' leaves are listed one by
// one in a plan; a longer one is a leaf walked element by element.
const shortArray = 8

func (c *Copier) flatten(t reflect.Type, off uintptr, p *[]leaf) {
	if c.shared[t] {
		return
	}
	if _, ok := c.custom[t]; ok {
		*p = append(*p, leaf{off, t})
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		*p = append(*p, leaf{off, t})
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			c.flatten(f.Type, off+f.Offset, p)
		}
	case reflect.Array:
		ep := c.plan(t.Elem())
		switch {
		case len(ep) == 0 || t.Len() == 0:
		case t.Len() <= shortArray:
			for i := range t.Len() {
				for _, l := range ep {
					*p = append(*p, leaf{off + uintptr(i)*t.Elem().Size() + l.off, l.t})
				}
			}
		default:
			*p = append(*p, leaf{off, t})
		}
	}
}

// walk calls f for each leaf of the t at p, long arrays element by element.
func (s *copying) walk(p unsafe.Pointer, t reflect.Type, f func(unsafe.Pointer, reflect.Type)) {
	for _, l := range s.c.plan(t) {
		q := unsafe.Add(p, l.off)
		if l.t.Kind() == reflect.Array && s.c.custom[l.t] == nil {
			et, size := l.t.Elem(), l.t.Elem().Size()
			for i := range l.t.Len() {
				s.walk(unsafe.Add(q, uintptr(i)*size), et, f)
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
	elem  reflect.Type
	n     int
	from  int            // the first element still to scan (todo)
	copy  unsafe.Pointer // the copy's start (outers)
}

type regionKey struct {
	start unsafe.Pointer
	elem  reflect.Type
}

func (r region) end() uintptr { return uintptr(r.start) + uintptr(r.n)*r.elem.Size() }

func (s *copying) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("deepcopy: "+format, args...)
	}
}

// scan notes the regions the leaf at p of type t points to.
func (s *copying) scan(p unsafe.Pointer, t reflect.Type) {
	if s.err != nil {
		return
	}
	if s.c.custom[t] != nil {
		s.fail("%v held by value has a custom copy", t)
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		s.pointee(*(*unsafe.Pointer)(p), t.Elem())
	case reflect.Slice:
		h := (*sliceHeader)(p)
		if h.cap > 0 {
			s.region(h.data, t.Elem(), h.cap)
		}
	case reflect.Map:
		s.scanMap(p, t)
	case reflect.Interface:
		v := reflect.NewAt(t, p).Elem()
		if v.IsNil() {
			return
		}
		d := v.Elem()
		if d.Kind() == reflect.Pointer {
			s.pointee(d.UnsafePointer(), d.Type().Elem())
		} else if len(s.c.plan(d.Type())) > 0 {
			tmp := reflect.New(d.Type())
			tmp.Elem().Set(d)
			s.walk(tmp.UnsafePointer(), d.Type(), s.scan)
		}
	default: // func, chan, unsafe pointer
		if *(*unsafe.Pointer)(p) != nil {
			s.fail("cannot copy a %v", t)
		}
	}
}

type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// pointee notes the region of a pointer to an elem.
func (s *copying) pointee(q unsafe.Pointer, elem reflect.Type) {
	switch {
	case q == nil || s.c.shared[elem] || elem.Size() == 0:
	case s.c.custom[elem] != nil:
		if _, ok := s.customs[q]; !ok {
			s.customs[q] = s.c.custom[elem](q)
		}
	default:
		s.region(q, elem, 1)
	}
}

// region notes n elems from start, to be scanned (drain) and copied.
func (s *copying) region(start unsafe.Pointer, elem reflect.Type, n int) {
	if s.c.shared[elem] || elem.Size() == 0 {
		return
	}
	if s.c.custom[elem] != nil {
		s.fail("%v held by value has a custom copy", elem)
		return
	}
	k := regionKey{start, elem}
	done, seen := s.scanned[k]
	if seen && done >= n {
		return
	}
	s.scanned[k] = n
	r := region{start: start, elem: elem, n: n, from: done}
	s.regions = append(s.regions, r)
	if len(s.c.plan(elem)) > 0 {
		s.todo = append(s.todo, r)
	}
}

// drain scans the regions noted, and those they point to, until none is
// left (a work list rather than recursion: a long linked list is fine).
func (s *copying) drain() {
	for len(s.todo) > 0 && s.err == nil {
		r := s.todo[len(s.todo)-1]
		s.todo = s.todo[:len(s.todo)-1]
		size := r.elem.Size()
		for i := r.from; i < r.n; i++ {
			s.walk(unsafe.Add(r.start, uintptr(i)*size), r.elem, s.scan)
		}
	}
}

// scanMap notes a map, and scans its keys and values.
func (s *copying) scanMap(p unsafe.Pointer, t reflect.Type) {
	m := *(*unsafe.Pointer)(p)
	if m == nil {
		return
	}
	if _, ok := s.maps[m]; ok {
		return
	}
	s.maps[m] = reflect.Value{}
	kt, vt := t.Key(), t.Elem()
	kw, vw := len(s.c.plan(kt)) > 0, len(s.c.plan(vt)) > 0
	if !kw && !vw {
		return
	}
	tk, tv := reflect.New(kt), reflect.New(vt)
	for it := reflect.NewAt(t, p).Elem().MapRange(); it.Next(); {
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
// that overlap without one holding the other.
func (s *copying) merge() error {
	sort.Slice(s.regions, func(i, j int) bool {
		a, b := s.regions[i], s.regions[j]
		if a.start != b.start {
			return uintptr(a.start) < uintptr(b.start)
		}
		return a.end() > b.end()
	})
	for _, r := range s.regions {
		if k := len(s.outers) - 1; k >= 0 && uintptr(r.start) < s.outers[k].end() {
			if o := s.outers[k]; r.end() > o.end() {
				return fmt.Errorf("deepcopy: %d %v overlap %d %v without either holding the other", r.n, r.elem, o.n, o.elem)
			}
			continue
		}
		s.outers = append(s.outers, r)
	}
	s.regions = nil
	return nil
}

// copyRegions allocates the copy of each outer region, copies its memory,
// and points its leaves into the copy.
func (s *copying) copyRegions() {
	s.c.copied = 0
	for i := range s.outers {
		o := &s.outers[i]
		s.c.copied += int64(o.n) * int64(o.elem.Size())
		dst := reflect.MakeSlice(reflect.SliceOf(o.elem), o.n, o.n)
		src := sliceHeader{o.start, o.n, o.n}
		reflect.Copy(dst, reflect.NewAt(reflect.SliceOf(o.elem), unsafe.Pointer(&src)).Elem())
		o.copy = dst.UnsafePointer()
	}
	for _, o := range s.outers {
		if len(s.c.plan(o.elem)) == 0 {
			continue
		}
		size := o.elem.Size()
		for i := range o.n {
			s.walk(unsafe.Add(o.copy, uintptr(i)*size), o.elem, s.fix)
		}
	}
}

// moved is where the copy holds what the original held at q.
func (s *copying) moved(q unsafe.Pointer) unsafe.Pointer {
	i := sort.Search(len(s.outers), func(i int) bool { return uintptr(s.outers[i].start) > uintptr(q) }) - 1
	if i < 0 || uintptr(q) >= s.outers[i].end() {
		s.fail("internal error: %p is in no region", q)
		return q
	}
	return unsafe.Add(s.outers[i].copy, uintptr(q)-uintptr(s.outers[i].start))
}

// movedPointee is the copy's pointer for a pointer q to an elem.
func (s *copying) movedPointee(q unsafe.Pointer, elem reflect.Type) unsafe.Pointer {
	switch {
	case q == nil || s.c.shared[elem] || elem.Size() == 0:
		return q
	case s.c.custom[elem] != nil:
		return s.customs[q]
	}
	return s.moved(q)
}

// fix points the leaf at p (a copy of the original's) into the copy.
func (s *copying) fix(p unsafe.Pointer, t reflect.Type) {
	switch t.Kind() {
	case reflect.Pointer:
		*(*unsafe.Pointer)(p) = s.movedPointee(*(*unsafe.Pointer)(p), t.Elem())
	case reflect.Slice:
		h := (*sliceHeader)(p)
		if h.cap > 0 && !s.c.shared[t.Elem()] && t.Elem().Size() > 0 {
			h.data = s.moved(h.data)
		}
	case reflect.Map:
		v := reflect.NewAt(t, p).Elem()
		if !v.IsNil() {
			v.Set(s.copyMap(v))
		}
	case reflect.Interface:
		v := reflect.NewAt(t, p).Elem()
		if v.IsNil() {
			return
		}
		d := v.Elem()
		dt := d.Type()
		if dt.Kind() == reflect.Pointer {
			v.Set(reflect.NewAt(dt.Elem(), s.movedPointee(d.UnsafePointer(), dt.Elem())))
		} else if len(s.c.plan(dt)) > 0 {
			tmp := reflect.New(dt)
			tmp.Elem().Set(d)
			s.walk(tmp.UnsafePointer(), dt, s.fix)
			v.Set(tmp.Elem())
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
	kt, vt := t.Key(), t.Elem()
	kw, vw := len(s.c.plan(kt)) > 0, len(s.c.plan(vt)) > 0
	tk, tv := reflect.New(kt), reflect.New(vt)
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
