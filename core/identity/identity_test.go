package identity_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/trace"
)

func tokens(v ...uint32) []uint32 { return v }

// TestSequence_ChainedIdentities is docs/model/g1.md ("Block identity"): only
// full blocks have an identity; two blocks are equal only if their whole
// prefixes are.
func TestSequence_ChainedIdentities(t *testing.T) {
	tab := identity.NewTable(8)
	var a, b, c identity.Sequence
	a.Extend(tab, tokens(1, 2, 3, 4, 5, 6, 7, 8, 9), 4, 0) // 2 full blocks, 1 partial token
	b.Extend(tab, tokens(1, 2, 3, 4, 5, 6, 7, 8), 4, 1)
	c.Extend(tab, tokens(9, 9, 9, 9, 5, 6, 7, 8), 4, 2) // same block 1 tokens, other parent
	if len(a.IDs) != 2 || len(b.IDs) != 2 {
		t.Fatalf("identities %v %v; want two full blocks each", a.IDs, b.IDs)
	}
	if a.IDs[0] != b.IDs[0] || a.IDs[1] != b.IDs[1] {
		t.Errorf("equal prefixes got identities %v and %v", a.IDs, b.IDs)
	}
	if c.IDs[1] == a.IDs[1] {
		t.Error("block 1 with the same tokens but another parent shares an identity")
	}
	if tab.Len() != 4 {
		t.Errorf("%d identities; want 4", tab.Len())
	}
	// IDs are dense, in order of first sight, and remember their birth.
	if a.IDs[0] != 0 || a.IDs[1] != 1 || c.IDs[0] != 2 || c.IDs[1] != 3 {
		t.Errorf("ids %v %v; want 0 1 and 2 3", a.IDs, c.IDs)
	}
	if o := tab.Origin(c.IDs[1]); o != (identity.Origin{Request: 2, Block: 1}) {
		t.Errorf("origin %+v; want request 2 block 1", o)
	}
}

// TestSequence_ExtendIsIncremental: extending as tokens arrive gives the
// same identities as hashing the whole sequence at once.
func TestSequence_ExtendIsIncremental(t *testing.T) {
	all := make([]uint32, 40)
	for i := range all {
		all[i] = uint32(i * 7)
	}
	t1 := identity.NewTable(16)
	var whole identity.Sequence
	whole.Extend(t1, all, 4, 0)
	t2 := identity.NewTable(16)
	var step identity.Sequence
	for n := 0; n <= len(all); n++ {
		step.Extend(t2, all[:n], 4, 0)
	}
	if len(whole.IDs) != 10 || len(step.IDs) != 10 {
		t.Fatalf("%d and %d identities; want 10", len(whole.IDs), len(step.IDs))
	}
	for j := range whole.IDs {
		if t1.Hash(whole.IDs[j]) != t2.Hash(step.IDs[j]) {
			t.Errorf("block %d hashes differ", j)
		}
	}
}

// TestTable_WideParents: a parent with many children (a shared system
// prompt followed by many continuations) still finds each child again.
func TestTable_WideParents(t *testing.T) {
	tab := identity.NewTable(64)
	first := make([]identity.ID, 20)
	for k := range first {
		var s identity.Sequence
		s.Extend(tab, tokens(1, 1, 1, 1, uint32(k), 0, 0, 0), 4, int32(k))
		first[k] = s.IDs[1]
	}
	for k := range first {
		var s identity.Sequence
		s.Extend(tab, tokens(1, 1, 1, 1, uint32(k), 0, 0, 0), 4, 99)
		if s.IDs[1] != first[k] {
			t.Errorf("child %d: identity %d; want %d", k, s.IDs[1], first[k])
		}
	}
	if tab.Len() != 21 {
		t.Errorf("%d identities; want 21", tab.Len())
	}
}

// TestTable_PagesAndOriginRuns: more identities than one page, born in
// interleaved requests, keep their hashes and origins.
func TestTable_PagesAndOriginRuns(t *testing.T) {
	tab := identity.NewTable(10)
	seqs := make([]identity.Sequence, 3)
	toks := make([][]uint32, 3)
	type born struct {
		id identity.ID
		o  identity.Origin
		h  uint64
	}
	var all []born
	for step := 0; tab.Len() < 150000; step++ {
		r := step % 3
		toks[r] = append(toks[r], uint32(step), uint32(r), 7, 8)
		before, from := tab.Len(), len(seqs[r].IDs)
		seqs[r].Extend(tab, toks[r], 4, int32(r))
		for j := from; j < len(seqs[r].IDs); j++ {
			if id := seqs[r].IDs[j]; int(id) >= before {
				all = append(all, born{id, identity.Origin{Request: int32(r), Block: int32(j)}, tab.Hash(id)})
			}
		}
	}
	origins := tab.Origins()
	for _, b := range all {
		if o := tab.Origin(b.id); o != b.o {
			t.Fatalf("identity %d: origin %+v, want %+v", b.id, o, b.o)
		}
		if o := origins.Of(b.id); o != b.o {
			t.Fatalf("identity %d: Origins.Of %+v, want %+v", b.id, o, b.o)
		}
	}
	var again identity.Sequence
	again.Extend(tab, toks[1], 4, 9)
	for j, id := range again.IDs {
		if id != seqs[1].IDs[j] {
			t.Fatalf("block %d: identity %d, want %d", j, id, seqs[1].IDs[j])
		}
	}
}

// TestSequence_RunsEqualTokens feeds random sessions (run-length encoded
// content, then generated tokens one by one, then more content, over block
// sizes that do and do not divide the runs) to two tables: one through the
// token path (a materialised token slice and Extend, as the engine did) and
// one through AppendContent / AppendToken. Every sequence's identities, the
// table sizes, and every identity's hash and origin must be equal.
func TestSequence_RunsEqualTokens(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 5))
	for round := range 300 {
		bs := blockSize(rng, round, 3)
		ta, tb := identity.NewTable(4), identity.NewTable(4)
		alphabet := 1 + rng.IntN(6)
		for req := range int32(1 + rng.IntN(8)) {
			var toks []uint32
			var a, b identity.Sequence
			for range 1 + rng.IntN(4) {
				// content: ids from a small alphabet so that sequences share prefixes
				run := 1 + rng.IntN(40)
				if rng.IntN(2) == 0 {
					run = bs * (1 + rng.IntN(3))
				}
				ids := make([]uint32, rng.IntN(6))
				for i := range ids {
					ids[i] = uint32(rng.IntN(alphabet))
				}
				length := rng.IntN(len(ids)*run + 1)
				turn := trace.Turn{Content: ids, RunLength: run, ContentLength: length}
				toks = turn.AppendContent(toks)
				a.Extend(ta, toks, bs, req)
				b.AppendContent(tb, ids, run, length, bs, req)
				for range rng.IntN(2 * bs) {
					x := 1<<31 + uint32(rng.IntN(3))
					toks = append(toks, x)
					a.Extend(ta, toks, bs, req)
					if rng.IntN(2) == 0 || !b.AppendCheap(x, bs, false) { // the decode loop's way, half the time
						b.AppendToken(tb, x, bs, req)
					}
				}
				if !slices.Equal(a.IDs, b.IDs) {
					t.Fatalf("round %d (block size %d) request %d: token path %v, run path %v", round, bs, req, a.IDs, b.IDs)
				}
			}
		}
		sameIdentities(t, round, ta, tb, true)
	}
}

// blockSize is a random test's block size for round: 16 (the engine's)
// every nth round, else 1 to 20, sizes that do and do not divide runs.
func blockSize(rng *rand.Rand, round, nth int) int {
	if round%nth == 0 {
		return 16
	}
	return 1 + rng.IntN(20)
}

// sameIdentities fails unless tables a and b hold the same identities,
// born at the same origins, with the same hashes when hashes is set.
func sameIdentities(t *testing.T, round int, a, b *identity.Table, hashes bool) {
	t.Helper()
	if a.Len() != b.Len() {
		t.Fatalf("round %d: %d and %d identities", round, a.Len(), b.Len())
	}
	for id := range identity.ID(a.Len()) {
		if a.Origin(id) != b.Origin(id) || hashes && a.Hash(id) != b.Hash(id) {
			t.Fatalf("round %d: identity %d is %x %+v and %x %+v", round, id, a.Hash(id), a.Origin(id), b.Hash(id), b.Origin(id))
		}
	}
}

// TestSequence_FreshNumbersAsLookupsWould is AppendFresh's promise
// (docs/model/g1.md ("Block identity")): sequences in flight together,
// each taking turns of shared content and generated tokens used once,
// content after generated tokens included (an accumulating session),
// get the same identities and origins whether the generated tokens are
// hashed and looked up (AppendToken) or numbered as fresh (AppendFresh).
func TestSequence_FreshNumbersAsLookupsWould(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 21))
	fresh := 0
	for round := range 200 {
		bs := blockSize(rng, round, 2)
		looked, numbered := identity.NewTable(4), identity.NewTable(4)
		n := 1 + rng.IntN(6)
		as, bs2 := make([]identity.Sequence, n), make([]identity.Sequence, n)
		next := uint32(1 << 31)
		for range 20 * n {
			req := rng.IntN(n)
			a, b := &as[req], &bs2[req]
			if rng.IntN(3) == 0 {
				ids := []uint32{uint32(rng.IntN(3)), uint32(rng.IntN(3))}
				run := bs * (1 + rng.IntN(2))
				length := rng.IntN(2*run + 1)
				a.AppendContent(looked, ids, run, length, bs, int32(req))
				b.AppendContent(numbered, ids, run, length, bs, int32(req))
			} else {
				for range 1 + rng.IntN(2*bs) {
					a.AppendToken(looked, next, bs, int32(req))
					if rng.IntN(2) == 0 || !b.AppendCheap(next, bs, true) { // the decode loop's way, half the time
						b.AppendFresh(numbered, next, bs, int32(req))
					}
					next++
				}
				fresh++
			}
			if !slices.Equal(a.IDs, b.IDs) {
				t.Fatalf("round %d (block size %d) request %d: looked up %v, numbered %v", round, bs, req, a.IDs, b.IDs)
			}
		}
		// A numbered (fresh) identity has no hash to compare.
		sameIdentities(t, round, looked, numbered, false)
	}
	if fresh == 0 {
		t.Fatal("no generated tokens")
	}
}

// TestTable_MatchesATrieByParentAndHash: random sequences with shared
// prefixes, extended in interleaved steps (whole turns, single generated
// tokens, across more than one page of identities), get the identities a
// plain map from (parent, hash) to a new dense number gives.
func TestTable_MatchesATrieByParentAndHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	tab := identity.NewTable(16)
	type key struct {
		parent identity.ID
		hash   uint64
	}
	ref := map[key]identity.ID{}
	const bs = 4
	seqs := make([]identity.Sequence, 40)
	toks := make([][]uint32, len(seqs))
	for step := 0; tab.Len() < 3*65536; step++ {
		r := rng.IntN(len(seqs))
		switch rng.IntN(4) {
		case 0: // a new sequence that shares a prefix of another's
			o := rng.IntN(len(seqs))
			toks[r] = append([]uint32(nil), toks[o][:rng.IntN(len(toks[o])+1)]...)
			seqs[r] = identity.Sequence{}
		case 1: // a turn of content
			for range rng.IntN(40) {
				toks[r] = append(toks[r], uint32(rng.IntN(3)))
			}
		default: // a generated token
			toks[r] = append(toks[r], uint32(rng.IntN(1000)))
		}
		seqs[r].Extend(tab, toks[r], bs, int32(r))
		parent := identity.None
		for j, id := range seqs[r].IDs {
			h := identity.Content(toks[r][j*bs : (j+1)*bs])
			want, ok := ref[key{parent, h}]
			if !ok {
				want = identity.ID(len(ref))
				ref[key{parent, h}] = want
			}
			if id != want || tab.Hash(id) != h {
				t.Fatalf("step %d, sequence %d, block %d: identity %d (hash %x); a trie by parent and hash gives %d (%x)", step, r, j, id, tab.Hash(id), want, h)
			}
			parent = id
		}
	}
	if tab.Len() != len(ref) {
		t.Errorf("%d identities; the trie has %d", tab.Len(), len(ref))
	}
}

// trieWorld drives a table with random sequences and checks it against a
// plain map by parent and hash.
type trieWorld struct {
	tab  *identity.Table
	ref  map[trieKey]identity.ID
	seqs []identity.Sequence
	toks [][]uint32
}

type trieKey struct {
	parent identity.ID
	hash   uint64
}

func (w *trieWorld) clone() *trieWorld {
	c := &trieWorld{tab: w.tab.Snapshot(), ref: maps.Clone(w.ref), seqs: make([]identity.Sequence, len(w.seqs)), toks: make([][]uint32, len(w.toks))}
	for i := range w.seqs {
		c.seqs[i] = identity.Sequence{IDs: slices.Clone(w.seqs[i].IDs)}
		c.seqs[i].Extend(c.tab, w.toks[i], 4, int32(i)) // restores the partial block
		c.toks[i] = slices.Clone(w.toks[i])
	}
	return c
}

func (w *trieWorld) step(t *testing.T, rng *rand.Rand, name string) {
	t.Helper()
	const bs = 4
	r := rng.IntN(len(w.seqs))
	switch rng.IntN(4) {
	case 0:
		o := rng.IntN(len(w.seqs))
		w.toks[r] = append([]uint32(nil), w.toks[o][:rng.IntN(len(w.toks[o])+1)]...)
		w.seqs[r] = identity.Sequence{}
	case 1:
		for range rng.IntN(40) {
			w.toks[r] = append(w.toks[r], uint32(rng.IntN(3)))
		}
	default:
		w.toks[r] = append(w.toks[r], uint32(rng.IntN(1000)))
	}
	w.seqs[r].Extend(w.tab, w.toks[r], bs, int32(r))
	parent := identity.None
	for j, id := range w.seqs[r].IDs {
		h := identity.Content(w.toks[r][j*bs : (j+1)*bs])
		want, ok := w.ref[trieKey{parent, h}]
		if !ok {
			want = identity.ID(len(w.ref))
			w.ref[trieKey{parent, h}] = want
		}
		if id != want || w.tab.Hash(id) != h {
			t.Fatalf("%s: sequence %d, block %d: identity %d; a trie by parent and hash gives %d", name, r, j, id, want)
		}
		parent = id
	}
}

// A snapshot and its table go on independently: each still matches its own
// trie after the other created identities (the first-child map and the
// last hash page copied).
func TestTable_SnapshotsGoOnIndependently(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	w := &trieWorld{tab: identity.NewTable(16), ref: map[trieKey]identity.ID{}, seqs: make([]identity.Sequence, 40), toks: make([][]uint32, 40)}
	var snaps []*trieWorld
	for w.tab.Len() < 3*65536 {
		w.step(t, rng, "table")
		if rng.IntN(3000) == 0 {
			snaps = append(snaps, w.clone())
		}
	}
	if len(snaps) < 3 {
		t.Fatalf("only %d snapshots", len(snaps))
	}
	for k, s := range snaps {
		n := s.tab.Len()
		for s.tab.Len() < n+20000 {
			s.step(t, rng, fmt.Sprintf("snapshot %d", k))
		}
	}
	for range 20000 {
		w.step(t, rng, "table after the snapshots went on")
	}
}

// TestSequence_LongRunCrossesPages: one run long enough to fill the
// first hash page as it grows and to start the next (Table.extendNewest
// writes a page's room at a time) gets the identities, hashes and
// origins of the token path.
func TestSequence_LongRunCrossesPages(t *testing.T) {
	const n = 70_000
	for _, bs := range []int{1, 3} {
		ta, tb := identity.NewTable(4), identity.NewTable(4)
		var a, b identity.Sequence
		toks := make([]uint32, n*bs+bs-1) // and a partial block
		for i := range toks {
			toks[i] = 7
		}
		a.Extend(ta, toks, bs, 2)
		b.AppendRun(tb, 7, len(toks), bs, 2)
		if !slices.Equal(a.IDs, b.IDs) || ta.Len() != n || tb.Len() != n {
			t.Fatalf("block size %d: %d and %d identities", bs, ta.Len(), tb.Len())
		}
		for id := range identity.ID(n) {
			if ta.Hash(id) != tb.Hash(id) || ta.Origin(id) != tb.Origin(id) {
				t.Fatalf("block size %d: identity %d is %x %+v and %x %+v", bs, id, ta.Hash(id), ta.Origin(id), tb.Hash(id), tb.Origin(id))
			}
		}
	}
}

// TestOrigins_BirthsInvertOf: Origins.Of names where each identity was
// first computed, and Births.Find finds it again from there, for request
// numbers that index the dense list (0, 1, 2), a negative one and one far
// past the table's runs, and for runs of new blocks that cross the pages
// Of searches by; a block no request computed is not found.
func TestOrigins_BirthsInvertOf(t *testing.T) {
	tab := identity.NewTable(10)
	reqs := []int32{0, -3, 2, 1, 900000}
	seqs := make([]identity.Sequence, len(reqs))
	toks := make([][]uint32, len(reqs))
	want := map[identity.ID]identity.Origin{}
	for step := 0; tab.Len() < 60000; step++ {
		r := step % len(reqs)
		toks[r] = append(toks[r], uint32(step), uint32(r), 7)
		if step%40 == 13 { // a run of 1,500 new blocks across pages
			for i := range 6000 {
				toks[r] = append(toks[r], uint32(i))
			}
		}
		before, from := tab.Len(), len(seqs[r].IDs)
		seqs[r].Extend(tab, toks[r], 4, reqs[r])
		for j := from; j < len(seqs[r].IDs); j++ {
			if id := seqs[r].IDs[j]; int(id) >= before {
				want[id] = identity.Origin{Request: reqs[r], Block: int32(j)}
			}
		}
	}
	o := tab.Origins()
	births := o.Births()
	for id, w := range want {
		if got := o.Of(id); got != w {
			t.Fatalf("identity %d: origin %+v, want %+v", id, got, w)
		}
		if got, ok := births.Find(w.Request, w.Block); !ok || got != id {
			t.Fatalf("births of %+v: %d %v, want %d", w, got, ok, id)
		}
	}
	for _, q := range []int32{3, -1, 900001} {
		if id, ok := births.Find(q, 0); ok {
			t.Errorf("request %d computed nothing, but Find gives %d", q, id)
		}
	}
	if _, ok := births.Find(0, int32(len(seqs[0].IDs))); ok {
		t.Error("Find found a block past request 0's last")
	}
}
