// Package identity owns block identities: the chained hash that makes two
// blocks equal only when their whole prefixes are equal, and the table that
// turns those hashes into small dense IDs with a human name.
//
// Every tier (G1, G2, G3) and the record speak in IDs, never in hashes. An
// ID's numeric order is the order in which the identity was first computed in
// the run; the G2 cohort LRU uses it as its deterministic tie-break
// (docs/model/g2.md ("CohortLRU (offloading_v0_24)")) and the record names a
// block after the request and block index where its ID was born
// (docs/model/record.md ("Names")).
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
//
// Identities form a trie: a block's identity is a child of its parent
// block's. Interning looks the hash up among the parent's children, which
// are few and sit next to the parent just touched, so the replay's hottest
// path (every new block of every request) costs no cache miss. Parents with
// many children (block 0's parent, a shared system prompt) move their
// children to one hash map.
type Table struct {
	nodes   []node
	origins []Origin
	wide    map[uint64]ID
}

type node struct {
	hash        uint64
	first, next ID // first child, next sibling
	kids        int32
	wide        bool // children are in Table.wide
}

// wideAfter is the child count beyond which a parent's children go to the
// hash map instead of its sibling list.
const wideAfter = 8

// NewTable returns an empty table sized for about n identities.
func NewTable(n int) *Table {
	return &Table{nodes: make([]node, 0, n), origins: make([]Origin, 0, n), wide: make(map[uint64]ID)}
}

// Child returns the identity with hash h whose parent is parent (None for
// block 0), creating it with origin o when new.
func (t *Table) Child(parent ID, h uint64, o Origin) ID {
	var p *node
	if parent != None {
		p = &t.nodes[parent]
	}
	if p == nil || p.wide {
		if id, ok := t.wide[h]; ok {
			return id
		}
	} else {
		for c := p.first; c != None; c = t.nodes[c].next {
			if t.nodes[c].hash == h {
				return c
			}
		}
	}
	id := ID(len(t.nodes))
	t.nodes = append(t.nodes, node{hash: h, first: None, next: None})
	t.origins = append(t.origins, o)
	if parent == None {
		t.wide[h] = id
		return id
	}
	p = &t.nodes[parent]
	switch {
	case p.wide:
		t.wide[h] = id
	case p.kids+1 > wideAfter:
		for c := p.first; c != None; c = t.nodes[c].next {
			t.wide[t.nodes[c].hash] = c
		}
		t.wide[h] = id
		p.wide = true
	default:
		t.nodes[id].next = p.first
		p.first = id
	}
	p.kids++
	return id
}

// Hash returns id's chained hash.
func (t *Table) Hash(id ID) uint64 { return t.nodes[id].hash }

// Origin returns where id was first computed.
func (t *Table) Origin(id ID) Origin { return t.origins[id] }

// Len is the number of identities created so far.
func (t *Table) Len() int { return len(t.nodes) }

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
	IDs []ID
}

// Extend computes the identities of every full block of tokens not yet
// covered, naming new identities after request req.
func (s *Sequence) Extend(t *Table, tokens []uint32, blockSize int, req int32) {
	if (len(s.IDs)+1)*blockSize > len(tokens) {
		// No new full block: the call for most generated tokens. Returning
		// before reading the last identity and its node saves the two
		// cache lines they sit on (about 2 M misses per §E run).
		return
	}
	parent, last := None, Root
	if n := len(s.IDs); n > 0 {
		parent = s.IDs[n-1]
		last = t.nodes[parent].hash
	}
	for j := len(s.IDs); (j+1)*blockSize <= len(tokens); j++ {
		h := Chain(last, tokens[j*blockSize:(j+1)*blockSize])
		id := t.Child(parent, h, Origin{Request: req, Block: int32(j)})
		s.IDs = append(s.IDs, id)
		parent, last = id, h
	}
}
