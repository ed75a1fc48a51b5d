// Package inplace stores a slice into a heap field without the collector's
// write barrier when the slice only changed length: while the collector
// marks, every pointer written into the heap goes through the barrier
// (docs/performance.md ("Pointer writes the collector sees")), and a slice
// header that grew in place, stored back, is such a pointer write.
package inplace

import "unsafe"

// Store sets *dst to s. When s lies on *dst's array from its start with the
// same capacity (a list that was resliced and appended to without growing),
// only the length is written.
func Store[T any](dst *[]T, s []T) {
	if cap(s) == cap(*dst) && cap(s) > 0 && unsafe.SliceData(s) == unsafe.SliceData(*dst) {
		*dst = (*dst)[:len(s)]
		return
	}
	*dst = s
}
