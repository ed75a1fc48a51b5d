// Package identity owns block identities: a trie of blocks by parent block
// and content that makes two blocks equal only when their whole prefixes
// are equal, numbered as small dense IDs with a human name.
//
// Every tier (G1, G2, G3) and the record speak in IDs, never in hashes. An
// ID's numeric order is the order in which the identity was first computed in
// the run; the G2 cohort LRU uses it as its deterministic tie-break
// (docs/model/g2.md ("CohortLRU (offloading_v0_24)")) and the record names a
// block after the request and block index where its ID was born
// (docs/model/record.md ("Names")).
package identity

import (
	"maps"
	"slices"
)

// ID is a dense block identity, numbered from 0 in order of first sight.
type ID int32

// None marks "no identity" (a partial or private block).
const None ID = -1

// Origin is where an identity was first computed: the request (global
// request index) and the block index inside that request's token sequence.
type Origin struct {
	Request int32
	Block   int32
}

// Table interns blocks by parent and content hash. It is not safe for
// concurrent use; each run owns one.
//
// Identities form a trie: a block's identity is the child of its parent
// block's with the block's content hash (Content). Two blocks are the same
// identity when their parents are and their contents hash alike, so
// equal identities mean equal whole prefixes. A real trace names millions
// of identities (5.9 M for the Mooncake conversation trace, where they were
// 77 % of the live heap), so
// the table keeps as little per identity as the lookup needs:
//
//   - its content hash, 8 bytes, in pages that are never copied as the
//     table grows;
//   - its first child: most often the next identity (a request's new blocks
//     are interned one after the other), which one bit says (cont); any
//     other first child (a turn that goes on past where an earlier one
//     stopped, after other requests' blocks were interned) in one map by
//     parent: a few per turn, since a generated block is never linked
//     (AppendFresh);
//   - later children (two requests that share a prefix and then differ)
//     in one map by parent and content hash, and block 0's identities in
//     one map by content hash.
//
// Interning compares the content hash with the parent's first child's, which is
// next to the parent just touched, so the replay's hottest path (every new
// block of every request) costs no cache miss. Origins are stored as runs:
// the identities one Extend creates are consecutive, born in consecutive
// blocks of one request, so one run (first ID, request, block) names them
// all.
type Table struct {
	hashes [][]uint64 // pageSize content hashes each; the last may be partly used
	cont   []uint64   // bit id: identity id+1 is id's first child
	firsts map[ID]ID  // the first child of an identity whose first child is not the next identity
	n      int        // identities created
	runs   []originRun
	roots  map[uint64]ID // the identities of block 0, by content hash
	kids   map[kid]ID    // the second and later children
}

// kid names a child by its parent and content hash.
type kid struct {
	parent ID
	hash   uint64
}

// originRun says identities from id on were born in request o.Request,
// blocks o.Block on, up to the next run's first identity.
type originRun struct {
	id ID
	o  Origin
}

const (
	pageBits = 16
	pageSize = 1 << pageBits
)

// NewTable returns an empty table for about n identities (its pages are
// allocated as identities are created, so n only sizes the first).
func NewTable(n int) *Table {
	return &Table{hashes: [][]uint64{make([]uint64, 0, min(max(n, 1), pageSize))},
		roots: make(map[uint64]ID), kids: make(map[kid]ID), firsts: make(map[ID]ID)}
}

// add appends an identity with hash h and returns it.
func (t *Table) add(h uint64, o Origin) ID {
	id := t.push(h)
	t.noteOrigin(id, o)
	return id
}

// push appends an identity with hash h and returns it; its origin is the
// caller's to note (noteOrigin).
func (t *Table) push(h uint64) ID {
	last := &t.hashes[len(t.hashes)-1]
	if len(*last) == cap(*last) {
		last = t.grow()
	}
	*last = append(*last, h)
	if t.n%64 == 0 {
		t.cont = append(t.cont, 0)
	}
	t.n++
	return ID(t.n - 1)
}

// grow makes room for one more hash and returns the page it goes in (once
// per page).
func (t *Table) grow() *[]uint64 {
	last := &t.hashes[len(t.hashes)-1]
	if cap(*last) < pageSize { // the first page, sized by NewTable
		grown := make([]uint64, len(*last), min(2*cap(*last), pageSize))
		copy(grown, *last)
		*last = grown
		return last
	}
	t.hashes = append(t.hashes, make([]uint64, 0, pageSize))
	return &t.hashes[len(t.hashes)-1]
}

// noteOrigin records that id, the newest identity, was born at o.
func (t *Table) noteOrigin(id ID, o Origin) {
	if k := len(t.runs) - 1; k < 0 || t.runs[k].o.Request != o.Request || t.runs[k].o.Block+int32(id-t.runs[k].id) != o.Block {
		t.runs = append(t.runs, originRun{id: id, o: o})
	}
}

// firstChild is parent's first child (None: it has none).
func (t *Table) firstChild(parent ID) ID {
	if t.cont[parent>>6]&(1<<(parent&63)) != 0 {
		return parent + 1
	}
	if c, ok := t.firsts[parent]; ok {
		return c
	}
	return None
}

// setFirst makes id parent's first child.
func (t *Table) setFirst(parent, id ID) {
	if id == parent+1 {
		t.cont[parent>>6] |= 1 << (parent & 63)
		return
	}
	t.firsts[parent] = id
}

// Child returns the identity with content hash h whose parent is parent
// (None for block 0), creating it with origin o when new.
func (t *Table) Child(parent ID, h uint64, o Origin) ID {
	if parent == ID(t.n-1) && parent != None {
		// The newest identity has no child yet (a child is created after
		// its parent): the path of every block a request computes past
		// what any request computed before, where looking the child up
		// is wasted.
		id := t.add(h, o)
		t.cont[parent>>6] |= 1 << (parent & 63)
		return id
	}
	if parent == None {
		if id, ok := t.roots[h]; ok {
			return id
		}
		id := t.add(h, o)
		t.roots[h] = id
		return id
	}
	c := t.firstChild(parent)
	if c == None {
		id := t.add(h, o)
		t.setFirst(parent, id)
		return id
	}
	if t.Hash(c) == h {
		return c
	}
	k := kid{parent, h}
	if id, ok := t.kids[k]; ok {
		return id
	}
	id := t.add(h, o)
	t.kids[k] = id
	return id
}

// extendNewest appends k identities of content hash c to ids, each the only
// child of the one before and the first a child of the newest identity:
// the blocks a request computes past anything computed before (a new
// identity has no child yet, so none needs looking up).
func (t *Table) extendNewest(c uint64, k int, o Origin, ids []ID) []ID {
	t.noteOrigin(ID(t.n), o) // the rest continue its run
	for k > 0 {
		// push, written out for the room left in the page.
		pg := &t.hashes[len(t.hashes)-1]
		if len(*pg) == cap(*pg) {
			pg = t.grow()
		}
		room := min(k, cap(*pg)-len(*pg))
		for range room {
			*pg = append(*pg, c)
			id := ID(t.n)
			if id%64 == 0 {
				t.cont = append(t.cont, 0)
			}
			t.cont[(id-1)>>6] |= 1 << ((id - 1) & 63)
			t.n++
			ids = append(ids, id)
		}
		k -= room
	}
	return ids
}

// Snapshot returns a table equal to t; later changes to either leave the
// other as it was (an engine checkpoint's, docs/model/engine.md
// ("Checkpoints")). What never changes once written is shared: the full
// hash pages and the origin runs so far. The rest (the last hash page,
// the first-child bits, the maps) is copied.
func (t *Table) Snapshot() *Table {
	s := &Table{n: t.n, hashes: slices.Clone(t.hashes), cont: slices.Clone(t.cont),
		firsts: maps.Clone(t.firsts), runs: slices.Clip(t.runs),
		roots: maps.Clone(t.roots), kids: maps.Clone(t.kids)}
	if last := len(s.hashes) - 1; len(s.hashes[last]) < pageSize {
		s.hashes[last] = append(make([]uint64, 0, cap(t.hashes[last])), t.hashes[last]...)
	}
	t.runs = slices.Clip(t.runs)
	return s
}

// PageBytes is the memory of t's hash pages: what every snapshot of it
// shares (Snapshot), and holds once t is gone.
func (t *Table) PageBytes() int64 { return int64(len(t.hashes)) * pageSize * 8 }

// Hash returns id's content hash.
func (t *Table) Hash(id ID) uint64 { return t.hashes[id>>pageBits][id&(pageSize-1)] }

// Origin returns where id was first computed.
func (t *Table) Origin(id ID) Origin { return originOf(t.runs, id) }

func originOf(runs []originRun, id ID) Origin {
	// The last run starting at or before id (a binary search written out:
	// sort.Search's call per step was most of a diff's block lookups).
	lo, hi := 0, len(runs)
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); runs[m].id > id {
			hi = m
		} else {
			lo = m + 1
		}
	}
	r := runs[lo-1]
	return Origin{Request: r.o.Request, Block: r.o.Block + int32(id-r.id)}
}

// Origins is where each identity of a table was first computed, kept
// without the table: its runs of consecutive identities born in
// consecutive blocks of one request (a few per request, where one Origin
// per identity is 8 bytes times millions).
type Origins struct {
	runs []originRun
	n    int
	// page[p] is the run holding identity p<<originPageBits: Of searches
	// only the runs of id's page (about a hundred on the Mooncake trace)
	// instead of all of them (a million: twenty probes, most of them cache
	// misses, for every block a diff matches between two runs).
	page []int32
}

const originPageBits = 10

// Origins returns a copy of the table's origins as they are now.
func (t *Table) Origins() Origins {
	o := Origins{runs: append([]originRun(nil), t.runs...), n: t.n}
	if len(o.runs) == 0 {
		return o
	}
	o.page = make([]int32, t.n>>originPageBits+1)
	k := 0
	for p := range o.page {
		for start := ID(p << originPageBits); k+1 < len(o.runs) && o.runs[k+1].id <= start; {
			k++
		}
		o.page[p] = int32(k)
	}
	return o
}

// Len is the number of identities o names.
func (o Origins) Len() int { return o.n }

// Of returns where id was first computed.
func (o Origins) Of(id ID) Origin {
	p := int(id >> originPageBits)
	if p >= len(o.page) {
		return originOf(o.runs, id)
	}
	hi := len(o.runs)
	if p+1 < len(o.page) {
		hi = int(o.page[p+1]) + 1
	}
	return originOf(o.runs[o.page[p]:hi], id)
}

// Births finds identities by where they were first computed (the inverse
// of Origins.Of): each request's runs, in identity order.
type Births struct {
	o Origins
	// byReq lists each request's runs (indices into o.runs), requests
	// numbered from 0; other holds any other request number's.
	byReq [][]int32
	other map[int32][]int32
}

// Births indexes o by request.
func (o Origins) Births() *Births {
	b := &Births{o: o}
	for i, r := range o.runs {
		q := r.o.Request
		switch {
		case q < 0 || int(q) > len(o.runs): // a dense slice would not pay
			if b.other == nil {
				b.other = map[int32][]int32{}
			}
			b.other[q] = append(b.other[q], int32(i))
		default:
			if int(q) >= len(b.byReq) {
				b.byReq = append(b.byReq, make([][]int32, int(q)+1-len(b.byReq))...)
			}
			b.byReq[q] = append(b.byReq[q], int32(i))
		}
	}
	return b
}

// Find returns the identity first computed as block block of request
// req, if any.
func (b *Births) Find(req, block int32) (ID, bool) {
	var runs []int32
	if req >= 0 && int(req) < len(b.byReq) {
		runs = b.byReq[req]
	} else {
		runs = b.other[req]
	}
	for _, i := range runs {
		r := b.o.runs[i]
		end := ID(b.o.n)
		if int(i)+1 < len(b.o.runs) {
			end = b.o.runs[i+1].id
		}
		if k := block - r.o.Block; k >= 0 && r.id+ID(k) < end {
			return r.id + ID(k), true
		}
	}
	return None, false
}

// Len is the number of identities created so far.
func (t *Table) Len() int { return t.n }

// Content hashes a block's tokens: murmur3's 64-bit finaliser over pairs
// of tokens, cheap and deterministic on every platform. A block's identity
// is its parent's child with this hash (Table.Child), so two blocks share
// an identity when their parents do and their contents hash alike; with
// 64 bits, two different blocks under one parent hashing alike is
// vanishingly unlikely. The blocks of a run of one repeated token (a
// Mooncake hash id's 512 tokens are 32 blocks of 16) share one content
// hash, computed once (Sequence.AppendRun). Hash values appear in no
// report: the table numbers identities in the order they are first seen.
func Content(tokens []uint32) uint64 { return contentRun(tokens, 0, 0) }

func fmix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// contentRun returns Content(pre followed by n copies of x) without
// building that slice.
func contentRun(pre []uint32, x uint32, n int) uint64 {
	h := uint64(len(pre)+n) * 0x9e3779b97f4a7c15
	i := 0
	for ; i+1 < len(pre); i += 2 {
		h = fmix(h ^ (uint64(pre[i])<<32 | uint64(pre[i+1])))
	}
	if i < len(pre) {
		if n == 0 {
			h = fmix(h ^ uint64(pre[i]) ^ 0xff51afd7ed558ccd)
			return fmix(h + 0x632be59bd9b4e019)
		}
		h = fmix(h ^ (uint64(pre[i])<<32 | uint64(x)))
		n--
	}
	xx := uint64(x)<<32 | uint64(x)
	for ; n >= 2; n -= 2 {
		h = fmix(h ^ xx)
	}
	if n == 1 {
		h = fmix(h ^ uint64(x) ^ 0xff51afd7ed558ccd)
	}
	return fmix(h + 0x632be59bd9b4e019)
}

// Sequence is the growing list of identities of one token sequence's full
// blocks. It extends itself incrementally as tokens are appended, so a
// multi-turn session hashes every block exactly once.
//
// A sequence is fed either a whole token slice (Extend, which reads the
// tokens past its last full block) or token by token and run by run
// (AppendRun, AppendToken, AppendContent), which keep only the tokens of the
// partial last block: a run of n copies of one token (a Mooncake hash block
// expanded to its 512 tokens) is hashed block by block without building
// the token array. Both give the same identities
// (TestSequence_RunsEqualTokens); one sequence uses one of the two.
type Sequence struct {
	IDs []ID
	// tail holds the tokens after the last full block (the Append methods).
	tail []uint32
	// fresh says the sequence holds a token no other sequence holds
	// (AppendFresh): every block from the one holding it on is new.
	fresh bool
}

// AppendRun appends n copies of token x, interning the identity of every
// block they complete (named after request req).
func (s *Sequence) AppendRun(t *Table, x uint32, n, blockSize int, req int32) {
	if len(s.tail)+n < blockSize {
		if s.tail == nil {
			s.tail = make([]uint32, 0, blockSize)
		}
		for range n {
			s.tail = append(s.tail, x)
		}
		return
	}
	if s.fresh {
		s.appendFresh(t, x, n, blockSize, req)
		return
	}
	parent := None
	if k := len(s.IDs); k > 0 {
		parent = s.IDs[k-1]
	}
	full, haveFull := uint64(0), false // the content of a block of blockSize copies of x
	for len(s.tail)+n >= blockSize {
		if len(s.tail) == 0 && parent == ID(t.n-1) && parent != None {
			// Every full block left is new (Table.extendNewest).
			if !haveFull {
				full, haveFull = contentRun(nil, x, blockSize), true
			}
			k := n / blockSize
			s.IDs = t.extendNewest(full, k, Origin{Request: req, Block: int32(len(s.IDs))}, s.IDs)
			n -= k * blockSize
			break
		}
		take := blockSize - len(s.tail)
		var c uint64
		switch {
		case take < blockSize:
			c = contentRun(s.tail, x, take)
		case !haveFull:
			full, haveFull = contentRun(nil, x, blockSize), true
			fallthrough
		default:
			c = full
		}
		id := t.Child(parent, c, Origin{Request: req, Block: int32(len(s.IDs))})
		s.IDs = append(s.IDs, id)
		parent = id
		s.tail = s.tail[:0]
		n -= take
	}
	if n > 0 && s.tail == nil {
		s.tail = make([]uint32, 0, blockSize)
	}
	for range n {
		s.tail = append(s.tail, x)
	}
}

// AppendToken appends one token (a generated one).
func (s *Sequence) AppendToken(t *Table, x uint32, blockSize int, req int32) {
	if len(s.tail)+1 < blockSize {
		if s.tail == nil {
			s.tail = make([]uint32, 0, blockSize)
		}
		s.tail = append(s.tail, x)
		return
	}
	s.AppendRun(t, x, 1, blockSize, req)
}

// AppendCheap appends x, when it completes no block, and reports whether
// it did; else the caller appends it with AppendToken or AppendFresh (x is
// fresh: AppendFresh's kind of token), which intern the block it completes.
// It inlines into the decode loop, which appends a token a request a pass
// and completes a block in one in blockSize.
func (s *Sequence) AppendCheap(x uint32, blockSize int, fresh bool) bool {
	n := len(s.tail)
	if n+1 >= blockSize || n >= cap(s.tail) {
		return false
	}
	s.tail = s.tail[:n+1] // the slice's pointer is not written again
	s.tail[n] = x
	s.fresh = s.fresh || fresh
	return true
}

// AppendFresh appends x, a token no other sequence holds or will ever
// hold (one the engine generated, trace.GeneratedTokenBase on, each used
// once). The block holding it, and every block after it in this
// sequence, has a prefix nobody else has, so its identity is created
// without a lookup, without a hash and without a link from its parent:
// no other sequence can ask for it (docs/model/g1.md ("Block identity")).
// The numbering is the one lookups would give, since each such block is
// new when computed.
func (s *Sequence) AppendFresh(t *Table, x uint32, blockSize int, req int32) {
	s.fresh = true
	s.AppendToken(t, x, blockSize, req)
}

// appendFresh is AppendRun in a fresh sequence: the blocks completed are
// numbered, nothing is hashed or looked up.
func (s *Sequence) appendFresh(t *Table, x uint32, n, blockSize int, req int32) {
	for len(s.tail)+n >= blockSize {
		n -= blockSize - len(s.tail)
		s.tail = s.tail[:0]
		s.IDs = append(s.IDs, t.add(0, Origin{Request: req, Block: int32(len(s.IDs))}))
	}
	if n > 0 && s.tail == nil {
		s.tail = make([]uint32, 0, blockSize)
	}
	for range n {
		s.tail = append(s.tail, x)
	}
}

// AppendContent appends the run-length encoded content ids (each standing
// for run copies of itself), truncated to length tokens.
func (s *Sequence) AppendContent(t *Table, ids []uint32, run, length, blockSize int, req int32) {
	run = max(run, 1)
	for _, id := range ids {
		if length <= 0 {
			break
		}
		n := min(run, length)
		s.AppendRun(t, id, n, blockSize, req)
		length -= n
	}
}

// Extend computes the identities of every full block of tokens not yet
// covered, naming new identities after request req.
func (s *Sequence) Extend(t *Table, tokens []uint32, blockSize int, req int32) {
	if (len(s.IDs)+1)*blockSize > len(tokens) {
		// No new full block: the call for most generated tokens. Returning
		// before reading the last identity and its node saves the two
		// cache lines they sit on (about 2 M misses per §E (docs/model/cases.md) run).
		return
	}
	parent := None
	if n := len(s.IDs); n > 0 {
		parent = s.IDs[n-1]
	}
	for j := len(s.IDs); (j+1)*blockSize <= len(tokens); j++ {
		id := t.Child(parent, Content(tokens[j*blockSize:(j+1)*blockSize]), Origin{Request: req, Block: int32(j)})
		s.IDs = append(s.IDs, id)
		parent = id
	}
}
