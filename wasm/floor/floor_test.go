package floor

import (
	"math/rand"
	"slices"
	"testing"
)

// sink keeps results alive so the compiler cannot drop the work.
var sink uint64

// fib is call overhead and little else; it is not inlined (recursive).
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

// BenchmarkCalls: small non-inlined calls, like the scheduler's and the
// engine's per-request steps.
func BenchmarkCalls(b *testing.B) {
	for b.Loop() {
		sink += uint64(fib(25))
	}
}

// BenchmarkHash: a murmur-style 64-bit finaliser over token pairs, the
// shape of identity.Content.
func BenchmarkHash(b *testing.B) {
	tokens := make([]uint32, 1<<16)
	for i := range tokens {
		tokens[i] = uint32(i * 2654435761)
	}
	for b.Loop() {
		h := uint64(0)
		for i := 0; i+1 < len(tokens); i += 2 {
			h ^= uint64(tokens[i])<<32 | uint64(tokens[i+1])
			h ^= h >> 33
			h *= 0xff51afd7ed558ccd
			h ^= h >> 33
		}
		sink += h
	}
}

// BenchmarkMap: inserts, hits and deletes on a map of int32 keys.
func BenchmarkMap(b *testing.B) {
	const n = 1 << 15
	for b.Loop() {
		m := make(map[int32]int32)
		for i := int32(0); i < n; i++ {
			m[i*7919] = i
		}
		for i := int32(0); i < n; i++ {
			sink += uint64(m[i*7919])
		}
		for i := int32(0); i < n; i += 2 {
			delete(m, i*7919)
		}
	}
}

// BenchmarkSort: slices.Sort of 64 Ki random integers.
func BenchmarkSort(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	src := make([]int64, 1<<16)
	for i := range src {
		src[i] = r.Int63()
	}
	x := make([]int64, len(src))
	for b.Loop() {
		copy(x, src)
		slices.Sort(x)
	}
	sink += uint64(x[0])
}

// node is an element of an index-linked list, like a G1 slot or a G2
// entry on its eviction queue.
type node struct {
	prev, next int32
	uses       int32
}

// BenchmarkList: take a random element off an index-linked queue and put
// it back at the tail, as G1 and G2 do when a block is used and released.
func BenchmarkList(b *testing.B) {
	const n = 1 << 14
	nodes := make([]node, n)
	for i := range nodes {
		nodes[i] = node{prev: int32(i - 1), next: int32(i + 1)}
	}
	nodes[n-1].next = -1
	head, tail := int32(0), int32(n-1)
	r := rand.New(rand.NewSource(1))
	picks := make([]int32, 1<<16)
	for i := range picks {
		picks[i] = int32(r.Intn(n))
	}
	for b.Loop() {
		for _, s := range picks {
			nd := &nodes[s]
			if s == tail {
				continue
			}
			if nd.prev >= 0 {
				nodes[nd.prev].next = nd.next
			} else {
				head = nd.next
			}
			nodes[nd.next].prev = nd.prev
			nd.prev, nd.next = tail, -1
			nodes[tail].next = s
			tail = s
			nd.uses++
		}
	}
	sink += uint64(head)
}
