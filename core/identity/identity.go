// Package identity owns block identities: the chained hash that makes two
// blocks equal only when their whole prefixes are equal, and the table that
// turns those hashes into small dense IDs with a human name.
//
// Every tier (G1, G2, G3) and the record speak in IDs, never in hashes. An
// ID's numeric order is the order in which the identity was first computed in
// the run; the G2 cohort LRU uses it as its deterministic tie-break
// (connectors.md §4.1) and the record names a block after the request and
// block index where its ID was born (record.md "Names").
package identity

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

// Table interns chained hashes. It is not safe for concurrent use; each run
// owns one.
type Table struct {
	byHash  map[uint64]ID
	origins []Origin
}

// NewTable returns an empty table sized for about n identities.
func NewTable(n int) *Table {
	return &Table{byHash: make(map[uint64]ID, n), origins: make([]Origin, 0, n)}
}

// Intern returns the ID of hash h, creating it with origin o when new.
func (t *Table) Intern(h uint64, o Origin) ID {
	if id, ok := t.byHash[h]; ok {
		return id
	}
	id := ID(len(t.origins))
	t.byHash[h] = id
	t.origins = append(t.origins, o)
	return id
}

// Origin returns where id was first computed.
func (t *Table) Origin(id ID) Origin { return t.origins[id] }

// Len is the number of identities created so far.
func (t *Table) Len() int { return len(t.origins) }

// Root is the parent hash of block 0.
const Root uint64 = 0x243f6a8885a308d3

// Chain returns the identity hash of a full block whose parent block has hash
// parent (Root for block 0) and whose tokens are tokens. The mixing is
// murmur3's 64-bit finaliser over pairs of tokens: cheap, deterministic on
// every platform, and with 64 bits a collision among the few million blocks
// of a run is vanishingly unlikely.
func Chain(parent uint64, tokens []uint32) uint64 {
	h := parent ^ (uint64(len(tokens)) * 0x9e3779b97f4a7c15)
	i := 0
	for ; i+1 < len(tokens); i += 2 {
		h = fmix(h ^ (uint64(tokens[i])<<32 | uint64(tokens[i+1])))
	}
	if i < len(tokens) {
		h = fmix(h ^ uint64(tokens[i]) ^ 0xff51afd7ed558ccd)
	}
	return fmix(h + 0x632be59bd9b4e019)
}

func fmix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// Sequence is the growing list of identities of one token sequence's full
// blocks. It extends itself incrementally as tokens are appended, so a
// multi-turn session hashes every block exactly once.
type Sequence struct {
	IDs  []ID
	last uint64 // hash of the last full block, Root when none
}

// Reset empties s for reuse, keeping its storage.
func (s *Sequence) Reset() {
	s.IDs = s.IDs[:0]
	s.last = Root
}

// Extend computes the identities of every full block of tokens not yet
// covered, naming new identities after request req.
func (s *Sequence) Extend(t *Table, tokens []uint32, blockSize int, req int32) {
	if len(s.IDs) == 0 {
		s.last = Root
	}
	for j := len(s.IDs); (j+1)*blockSize <= len(tokens); j++ {
		h := Chain(s.last, tokens[j*blockSize:(j+1)*blockSize])
		s.last = h
		s.IDs = append(s.IDs, t.Intern(h, Origin{Request: req, Block: int32(j)}))
	}
}
