package g2_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/core/g2"
	"github.com/kvsim/kvsim/core/identity"
)

type ids = []identity.ID

// stored makes keys resident through one store (one completion cohort).
func stored(t *testing.T, tr *g2.Tier, keys ...identity.ID) {
	t.Helper()
	if _, res := tr.PrepareProtected(keys, nil); res != g2.Prepared {
		t.Fatalf("store %v: %v; want prepared", keys, res)
	}
	tr.CompleteStore(keys)
	check(t, tr)
}

func check(t *testing.T, tr *g2.Tier) {
	t.Helper()
	if err := tr.Check(); err != nil {
		t.Fatal(err)
	}
}

func order(tr *g2.Tier) ids { return tr.Order(nil) }

func wantOrder(t *testing.T, tr *g2.Tier, want ids) {
	t.Helper()
	if got := order(tr); !slices.Equal(got, want) {
		t.Errorf("victim order %v; want %v", got, want)
	}
}

// victims stores fresh keys into a full tier and returns what it evicted,
// in order: the policy's victim order made observable.
func victims(t *testing.T, tr *g2.Tier, n int) ids {
	t.Helper()
	before := tr.Entries(nil)
	fresh := make(ids, n)
	for i := range fresh {
		fresh[i] = identity.ID(1000 + i)
	}
	if _, res := tr.PrepareProtected(fresh, nil); res != g2.Prepared {
		t.Fatalf("store of %d fresh keys: %v", n, res)
	}
	var out ids
	for _, id := range before {
		if tr.Lookup(id) == g2.Absent {
			out = append(out, id)
		}
	}
	// before is in list order, so out is the eviction order.
	return out
}

// TestCohortLRU_CohortStampAndIdentityTieBreak is
// docs/model/g2.md ("CohortLRU (offloading_v0_24)"): one completed store is
// one cohort ordered by identity sequence number (not by the order of its
// keys), and a later cohort is more recent whatever its identities.
func TestCohortLRU_CohortStampAndIdentityTieBreak(t *testing.T) {
	tr := g2.NewTier(8, g2.CohortLRU)
	stored(t, tr, 5, 3, 4)
	stored(t, tr, 1)
	wantOrder(t, tr, ids{3, 4, 5, 1})
	if got := victims(t, tr, 6); !slices.Equal(got, ids{3, 4}) {
		t.Errorf("victims %v; want [3 4]", got)
	}
}

// TestCohortLRU_TouchGivesEachKeyItsOwnStamp: keys are processed in the
// given order (reversed by callers), each becoming the most recent; pending
// and pinned keys ignore touches.
func TestCohortLRU_TouchGivesEachKeyItsOwnStamp(t *testing.T) {
	tr := g2.NewTier(8, g2.CohortLRU)
	stored(t, tr, 1, 2, 3, 4)
	tr.Touch(ids{1, 2}, true) // 2, then 1
	wantOrder(t, tr, ids{3, 4, 2, 1})
	tr.Touch(ids{3}, false)
	wantOrder(t, tr, ids{4, 2, 1, 3})

	tr.PrepareProtected(ids{9}, nil) // pending
	tr.Pin(ids{4})
	tr.Touch(ids{9, 4}, false)
	wantOrder(t, tr, ids{2, 1, 3})
	tr.CompleteStore(ids{9})
	tr.Unpin(ids{4})
	wantOrder(t, tr, ids{2, 1, 3, 9, 4})
	check(t, tr)
}

// TestCohortLRU_UnpinnedKeysShareOneCohort: the keys a load completion
// unpins re-enter together, in identity order, at the most recent end.
func TestCohortLRU_UnpinnedKeysShareOneCohort(t *testing.T) {
	tr := g2.NewTier(8, g2.CohortLRU)
	stored(t, tr, 1, 2, 3, 4)
	tr.Pin(ids{3, 1})
	wantOrder(t, tr, ids{2, 4})
	tr.Unpin(ids{3, 1})
	wantOrder(t, tr, ids{2, 4, 1, 3})
	check(t, tr)
}

// TestRanked_RankAtStore is docs/model/g2.md ("Ranked (offloading_v0_32)"): a
// store takes its place at preparation; completions do not reorder; pending
// and pinned entries keep their place but are skipped as victims; a touch
// moves any present key, a pending one included (Decision).
func TestRanked_RankAtStore(t *testing.T) {
	tr := g2.NewTier(4, g2.Ranked)
	tr.PrepareProtected(ids{1, 2}, nil)
	tr.PrepareProtected(ids{3}, nil)
	wantOrder(t, tr, nil) // all pending: nothing evictable
	tr.CompleteStore(ids{3})
	tr.CompleteStore(ids{1, 2})
	wantOrder(t, tr, ids{1, 2, 3})

	tr.PrepareProtected(ids{4}, nil) // pending, ranked most recent
	tr.Touch(ids{4, 1}, false)       // moves pending 4, then 1
	tr.CompleteStore(ids{4})
	wantOrder(t, tr, ids{2, 3, 4, 1})

	tr.Pin(ids{2})
	wantOrder(t, tr, ids{3, 4, 1})
	tr.Unpin(ids{2}) // back in its old place: no re-rank on a load completion
	wantOrder(t, tr, ids{2, 3, 4, 1})
	check(t, tr)
	if got := victims(t, tr, 2); !slices.Equal(got, ids{2, 3}) {
		t.Errorf("victims %v; want [2 3]", got)
	}
}

// TestRanked_PinnedHeadIsSkipped: a pinned entry at the least-recent end is
// passed over and the next one is evicted.
func TestRanked_PinnedHeadIsSkipped(t *testing.T) {
	tr := g2.NewTier(3, g2.Ranked)
	stored(t, tr, 1, 2, 3)
	tr.Pin(ids{1})
	if got := victims(t, tr, 1); !slices.Equal(got, ids{2}) {
		t.Errorf("victims %v; want [2]", got)
	}
}

// TestFreeQueue_ReleaseOrder is
// docs/model/g2.md ("FreeQueue (simple_cpu_v0_32)"): entries join the queue
// when they become free — a store completion in block order, a load
// completion's unpins in block order — and there are no touches.
func TestFreeQueue_ReleaseOrder(t *testing.T) {
	tr := g2.NewTier(8, g2.FreeQueue)
	stored(t, tr, 7, 5, 6) // block order 7, 5, 6: no identity sort
	stored(t, tr, 1)
	wantOrder(t, tr, ids{7, 5, 6, 1})
	tr.Touch(ids{7, 5}, true)
	wantOrder(t, tr, ids{7, 5, 6, 1})

	// A load of blocks 7, 5, 6 pins them; its completion re-enters them at
	// the tail in block order (reverse order would change §A's (docs/model/cases.md) 192 row).
	tr.Pin(ids{7, 5, 6})
	wantOrder(t, tr, ids{1})
	tr.Unpin(ids{7, 5, 6})
	wantOrder(t, tr, ids{1, 7, 5, 6})
	check(t, tr)
	if got := victims(t, tr, 6); !slices.Equal(got, ids{1, 7}) {
		t.Errorf("victims %v; want [1 7]", got)
	}
}

// TestFreeQueue_PinCountsNest: an entry pinned twice (a lookup pin and a
// load pin) is free only after both go.
func TestFreeQueue_PinCountsNest(t *testing.T) {
	tr := g2.NewTier(4, g2.FreeQueue)
	stored(t, tr, 1, 2)
	tr.Pin(ids{1})
	tr.Pin(ids{1})
	tr.Unpin(ids{1})
	wantOrder(t, tr, ids{2})
	tr.Unpin(ids{1})
	wantOrder(t, tr, ids{2, 1})
	if tr.Pins(1) != 0 {
		t.Errorf("pins %d; want 0", tr.Pins(1))
	}
}

// snapshot is everything a failed admission must leave alone.
type snapshot struct {
	used, resident, free int
	order, entries       ids
	evictions            int64
}

func snap(tr *g2.Tier) snapshot {
	return snapshot{tr.Used(), tr.NumResident(), tr.NumFree(), tr.Order(nil), tr.Entries(nil), tr.Evictions}
}

func same(a, b snapshot) bool {
	return a.used == b.used && a.resident == b.resident && a.free == b.free &&
		slices.Equal(a.order, b.order) && slices.Equal(a.entries, b.entries) && a.evictions == b.evictions
}

// TestProtected_Admission is docs/model/g2.md ("Store admission")'s
// whole-range, protected mode under each policy.
func TestProtected_Admission(t *testing.T) {
	for _, pol := range []g2.Policy{g2.CohortLRU, g2.Ranked, g2.FreeQueue} {
		t.Run(pol.String(), func(t *testing.T) {
			t.Run("retry when only listed keys could go", func(t *testing.T) {
				tr := g2.NewTier(3, pol)
				stored(t, tr, 1, 2, 3)
				before := snap(tr)
				missing, res := tr.PrepareProtected(ids{1, 2, 3, 4}, ids{42})
				if res != g2.Retry || !slices.Equal(missing, ids{42}) {
					t.Errorf("got %v, %v; want retry, [42]", res, missing)
				}
				if after := snap(tr); !same(before, after) {
					t.Errorf("retry changed the tier: %+v; want %+v", after, before)
				}
				if tr.Lookup(4) != g2.Absent {
					t.Error("retry created an entry")
				}
			})
			t.Run("retry when victims are pinned or pending", func(t *testing.T) {
				tr := g2.NewTier(2, pol)
				stored(t, tr, 1)
				tr.Pin(ids{1})
				tr.PrepareProtected(ids{2}, nil)
				before := snap(tr)
				if _, res := tr.PrepareProtected(ids{3}, nil); res != g2.Retry {
					t.Errorf("got %v; want retry", res)
				}
				if after := snap(tr); !same(before, after) {
					t.Errorf("retry changed the tier: %+v; want %+v", after, before)
				}
			})
			t.Run("structurally unfittable", func(t *testing.T) {
				tr := g2.NewTier(2, pol)
				if _, res := tr.PrepareProtected(ids{1, 2, 3}, nil); res != g2.Retry || tr.Used() != 0 {
					t.Errorf("got %v with %d entries; want retry, 0", res, tr.Used())
				}
			})
			t.Run("already present, pending counts", func(t *testing.T) {
				tr := g2.NewTier(3, pol)
				stored(t, tr, 1)
				tr.PrepareProtected(ids{2}, nil)
				before := snap(tr)
				missing, res := tr.PrepareProtected(ids{1, 2}, nil)
				if res != g2.AlreadyPresent || len(missing) != 0 {
					t.Errorf("got %v, %v; want already present, none missing", res, missing)
				}
				if after := snap(tr); !same(before, after) {
					t.Errorf("changed the tier: %+v; want %+v", after, before)
				}
			})
			t.Run("victims skip the request's own keys", func(t *testing.T) {
				tr := g2.NewTier(3, pol)
				stored(t, tr, 1, 2, 3) // 1 is least recent under every policy
				missing, res := tr.PrepareProtected(ids{1, 4, 5}, nil)
				if res != g2.Prepared || !slices.Equal(missing, ids{4, 5}) {
					t.Fatalf("got %v, %v; want prepared, [4 5]", res, missing)
				}
				if tr.Lookup(1) != g2.Resident || tr.Lookup(2) != g2.Absent || tr.Lookup(3) != g2.Absent {
					t.Errorf("states 1:%v 2:%v 3:%v; want 1 kept, 2 and 3 evicted", tr.Lookup(1), tr.Lookup(2), tr.Lookup(3))
				}
				if tr.Lookup(4) != g2.Pending || tr.Lookup(5) != g2.Pending || tr.Evictions != 2 {
					t.Errorf("4:%v 5:%v evictions %d; want pending, pending, 2", tr.Lookup(4), tr.Lookup(5), tr.Evictions)
				}
				check(t, tr)
			})
		})
	}
}

// TestRoomLimited_Admission is docs/model/g2.md ("Store admission")'s
// room-limited mode: room is free slots plus every evictable entry, and
// victims come from all of them in policy order (a key the storing request
// reuses included).
func TestRoomLimited_Admission(t *testing.T) {
	tr := g2.NewTier(4, g2.FreeQueue)
	stored(t, tr, 1, 2)
	tr.Pin(ids{2})
	tr.PrepareProtected(ids{3}, nil) // pending
	if got := tr.Room(); got != 2 {
		t.Fatalf("room %d; want 2 (1 free + 1 evictable)", got)
	}
	tr.PrepareUnprotected(ids{4, 5})
	if tr.Lookup(1) != g2.Absent || tr.Lookup(2) != g2.Resident || tr.Lookup(3) != g2.Pending {
		t.Errorf("states 1:%v 2:%v 3:%v; want 1 evicted, pinned 2 and pending 3 kept", tr.Lookup(1), tr.Lookup(2), tr.Lookup(3))
	}
	if tr.Lookup(4) != g2.Pending || tr.Lookup(5) != g2.Pending || tr.Used() != 4 {
		t.Errorf("4:%v 5:%v used %d; want pending, pending, 4", tr.Lookup(4), tr.Lookup(5), tr.Used())
	}
	check(t, tr)
	if got := tr.Room(); got != 0 {
		t.Errorf("room %d; want 0", got)
	}
}

// TestTier_Counts: Used counts pending entries, NumResident only completed
// ones, and evictions keep both right.
func TestTier_Counts(t *testing.T) {
	tr := g2.NewTier(3, g2.CohortLRU)
	tr.PrepareProtected(ids{1, 2}, nil)
	if tr.Used() != 2 || tr.NumResident() != 0 || tr.NumFree() != 1 {
		t.Errorf("used %d resident %d free %d; want 2 0 1", tr.Used(), tr.NumResident(), tr.NumFree())
	}
	tr.CompleteStore(ids{1, 2})
	tr.PrepareProtected(ids{3, 4}, nil) // evicts 1
	if tr.Used() != 3 || tr.NumResident() != 1 || tr.Evictions != 1 {
		t.Errorf("used %d resident %d evictions %d; want 3 1 1", tr.Used(), tr.NumResident(), tr.Evictions)
	}
	check(t, tr)
}

// TestLastScan_RetryBoundIsSound drives a small tier through random stores,
// completions, pins and unpins. Whenever a store retried, it checks after
// every later change that the lower bound the connector uses to skip the
// scan (LastScan's demand minus the blocking changes since, at least one
// while the absent key stays absent) never claims Retry for a superset of
// the retried keys that a real scan would admit.
func TestLastScan_RetryBoundIsSound(t *testing.T) {
	for _, policy := range []g2.Policy{g2.CohortLRU, g2.Ranked, g2.FreeQueue} {
		t.Run(policy.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(policy)))
			tr := g2.NewTier(12, policy)
			var pending [][]identity.ID
			var pinned []identity.ID
			type retried struct {
				keys      ids
				demand    int
				absent    identity.ID
				blockings uint64
			}
			var open []retried
			confirmed := 0
			for step := 0; step < 20000; step++ {
				switch op := rng.IntN(4); {
				case op == 0 && len(pending) > 0:
					k := rng.IntN(len(pending))
					tr.CompleteStore(pending[k])
					pending = slices.Delete(pending, k, k+1)
				case op == 1:
					// Pin or unpin a resident key.
					id := identity.ID(rng.IntN(40))
					if len(open) > 0 {
						// Prefer the keys of a retried store: their pins are
						// what lowers its demand.
						r := open[rng.IntN(len(open))]
						id = r.keys[rng.IntN(len(r.keys))]
					}
					if tr.Lookup(id) == g2.Resident && rng.IntN(2) == 0 {
						tr.Pin(ids{id})
						pinned = append(pinned, id)
					} else if len(pinned) > 0 {
						k := rng.IntN(len(pinned))
						tr.Unpin(pinned[k : k+1])
						pinned = slices.Delete(pinned, k, k+1)
					}
				default:
					start := identity.ID(rng.IntN(36))
					keys := ids{}
					for id := start; id < start+identity.ID(1+rng.IntN(6)); id++ {
						keys = append(keys, id)
					}
					before := tr.Blockings()
					missing, res := tr.PrepareProtected(keys, nil)
					switch res {
					case g2.Prepared:
						pending = append(pending, missing)
						pos := tr.MissingPositions()
						for i, id := range missing {
							if i >= len(pos) || keys[pos[i]] != id {
								t.Fatalf("step %d: missing %v at positions %v of %v", step, missing, pos, keys)
							}
						}
					case g2.Retry:
						d, a := tr.LastScan()
						open = append(open, retried{keys, d, a, before})
					}
				}
				check(t, tr)
				// Every open retry, with one more key, against the tier now.
				kept := open[:0]
				for _, r := range open {
					demand := r.demand - int(tr.Blockings()-r.blockings)
					if tr.Lookup(r.absent) == g2.Absent {
						demand = max(demand, 1)
					}
					if demand <= tr.Room() {
						continue // the connector would scan again
					}
					// Probe on a copy so the real tier is untouched.
					probe := tr.Clone()
					keys := append(slices.Clone(r.keys), r.keys[len(r.keys)-1]+1)
					if _, res := probe.PrepareProtected(keys, nil); res != g2.Retry {
						t.Fatalf("step %d: bound %d > room %d claims Retry for %v, scan says %v", step, demand, tr.Room(), keys, res)
					}
					confirmed++
					kept = append(kept, r)
				}
				open = kept
			}
			if confirmed == 0 {
				t.Fatal("the bound never applied: the test exercises nothing")
			}
		})
	}
}

// TestTouch_MatchesSequentialMoves compares Touch with its definition (each
// listed key, in touch order, moves to the most-recent end) on random
// tiers, touch sets and directions under both listing policies, runs of
// neighbouring keys and the already-in-place case included. The observer
// must see one leave-and-join per key that moves, and nothing for a touch
// that leaves the order as it is, which the record replays.
func TestTouch_MatchesSequentialMoves(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for round := 0; round < 4000; round++ {
		policy := []g2.Policy{g2.CohortLRU, g2.Ranked}[round%2]
		tr := g2.NewTier(32, policy)
		for id := identity.ID(0); id < 32; {
			k := identity.ID(1 + rng.IntN(4))
			stored(t, tr, ids{id, id + 1, id + 2, id + 3}[:min(k, 32-id)]...)
			id += k
		}
		pinned := identity.None
		if rng.IntN(3) == 0 {
			pinned = identity.ID(rng.IntN(32))
			tr.Pin(ids{pinned})
		}
		// The policy list: every entry, but CohortLRU unlists pinned ones.
		listed := func() ids {
			return slices.DeleteFunc(tr.Entries(nil), func(id identity.ID) bool {
				return policy == g2.CohortLRU && id == pinned
			})
		}
		var keys ids
		for id := identity.ID(rng.IntN(36)); id < 36 && len(keys) < 12; id += identity.ID(1 + rng.IntN(2)) {
			keys = append(keys, id)
		}
		reverse := rng.IntN(2) == 0
		for repeat := 0; repeat < 2; repeat++ { // the second touch is in place
			want := listed()
			seq := slices.Clone(keys)
			if reverse {
				slices.Reverse(seq)
			}
			var wantMoves []string
			for _, id := range seq {
				if i := slices.Index(want, id); i >= 0 && i < len(want)-1 {
					want = append(slices.Delete(want, i, i+1), id)
					wantMoves = append(wantMoves, fmt.Sprintf("-%d", id), fmt.Sprintf("+%d", id))
				}
			}
			if slices.Equal(want, listed()) {
				wantMoves = nil
			}
			obs := &moveLog{}
			tr.SetObserver(obs)
			tr.Touch(keys, reverse)
			tr.SetObserver(nil)
			check(t, tr)
			if got := listed(); !slices.Equal(got, want) {
				t.Fatalf("round %d (%v): touch %v reverse %v: order %v; want %v", round, policy, keys, reverse, got, want)
			}
			if !slices.Equal(obs.moves, wantMoves) {
				t.Fatalf("round %d (%v): touch %v reverse %v: observed %v; want %v", round, policy, keys, reverse, obs.moves, wantMoves)
			}
		}
	}
}

// moveLog records the list moves a tier reports.
type moveLog struct{ moves []string }

func (m *moveLog) EntryChanged(identity.ID) {}
func (m *moveLog) Evicted(identity.ID)      {}
func (m *moveLog) Listed(id identity.ID, in bool) {
	m.moves = append(m.moves, fmt.Sprintf("%s%d", map[bool]string{false: "-", true: "+"}[in], id))
}

// TestComplete_PreparedEntriesMatchKeys drives two tiers through the same
// random stores, pins and unpins under each policy: one completes its
// stores by the entries Prepared returned (as connectors do), the other,
// observed, by their keys. Prepared must name one pending entry per key made pending,
// and the two tiers must keep the same contents and eviction order.
func TestComplete_PreparedEntriesMatchKeys(t *testing.T) {
	for _, policy := range []g2.Policy{g2.CohortLRU, g2.Ranked, g2.FreeQueue} {
		t.Run(policy.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, uint64(policy)))
			byEntry, byKey := g2.NewTier(10, policy), g2.NewTier(10, policy)
			// An observer takes byKey down the general paths, where
			// byEntry, unobserved, takes FreeQueue's own (completeQueued).
			byKey.SetObserver(&moveLog{})
			type store struct {
				keys    ids
				entries []int32
			}
			var pending []store
			var pinned ids
			for step := 0; step < 20000; step++ {
				switch op := rng.IntN(4); {
				case op == 0 && len(pending) > 0:
					k := rng.IntN(len(pending))
					byEntry.Complete(pending[k].entries)
					byKey.CompleteStore(pending[k].keys)
					pending = slices.Delete(pending, k, k+1)
				case op == 1:
					if id := identity.ID(rng.IntN(30)); byKey.Lookup(id) == g2.Resident && rng.IntN(2) == 0 {
						byEntry.Pin(ids{id})
						byKey.Pin(ids{id})
						pinned = append(pinned, id)
					} else if len(pinned) > 0 {
						k := rng.IntN(len(pinned))
						byEntry.Unpin(pinned[k : k+1])
						byKey.Unpin(pinned[k : k+1])
						pinned = slices.Delete(pinned, k, k+1)
					}
				default:
					var keys ids
					for id := identity.ID(rng.IntN(26)); len(keys) < 1+rng.IntN(5); id++ {
						if op == 2 || byKey.Lookup(id) == g2.Absent {
							keys = append(keys, id)
						}
					}
					if op == 2 {
						missing, res := byEntry.PrepareProtected(keys, nil)
						if _, res2 := byKey.PrepareProtected(keys, nil); res2 != res {
							t.Fatalf("step %d: the tiers answered %v and %v", step, res, res2)
						}
						if res != g2.Prepared {
							break
						}
						keys = missing
					} else {
						keys = keys[:min(len(keys), byKey.Room())]
						if len(keys) == 0 {
							break
						}
						byEntry.PrepareUnprotected(keys)
						byKey.PrepareUnprotected(keys)
					}
					es := slices.Clone(byEntry.Prepared())
					if len(es) != len(keys) {
						t.Fatalf("step %d: %d entries prepared for %d keys", step, len(es), len(keys))
					}
					pending = append(pending, store{keys, es})
				}
				check(t, byEntry)
				if a, b := byEntry.Order(nil), byKey.Order(nil); !slices.Equal(a, b) {
					t.Fatalf("step %d: eviction order %v by entry, %v by key", step, a, b)
				}
				if a, b := byEntry.Entries(nil), byKey.Entries(nil); !slices.Equal(a, b) {
					t.Fatalf("step %d: entries %v by entry, %v by key", step, a, b)
				}
				if a, b := counters(byEntry), counters(byKey); a != b {
					t.Fatalf("step %d: counters %+v by entry, %+v by key", step, a, b)
				}
			}
		})
	}
}

// TestScanAbsent compares ScanAbsent with the scan a room-limited store
// would make key by key with Lookup, over random tiers, key lists and
// rooms.
func TestScanAbsent(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 5))
	for round := 0; round < 2000; round++ {
		tr := g2.NewTier(16, g2.FreeQueue)
		for id := identity.ID(0); id < 40; id++ {
			if rng.IntN(3) == 0 && tr.NumFree() > 0 {
				stored(t, tr, id)
			}
		}
		var keys ids
		for range rng.IntN(12) {
			keys = append(keys, identity.ID(rng.IntN(44)))
		}
		room := rng.IntN(6)
		wantEnd, wantFirst, wantGap, left := len(keys), -1, false, room
		for i, id := range keys {
			if tr.Lookup(id) != g2.Absent {
				wantGap = wantGap || wantFirst >= 0
				continue
			}
			if left == 0 {
				wantEnd = i
				break
			}
			left--
			if wantFirst < 0 {
				wantFirst = i
			}
		}
		end, first, gap := tr.ScanAbsent(keys, room)
		if end != wantEnd || first != wantFirst || gap != wantGap {
			t.Fatalf("round %d: ScanAbsent(%v, %d) = %d, %d, %v; want %d, %d, %v", round, keys, room, end, first, gap, wantEnd, wantFirst, wantGap)
		}
	}
}

// tierCounters are a tier's counters and the entries' creation order.
type tierCounters struct {
	used, resident, evictable int
	evictions                 int64
	version, blockings, added uint64
	order                     string
}

func counters(tr *g2.Tier) tierCounters {
	c := tierCounters{used: tr.Used(), resident: tr.NumResident(), evictable: tr.NumEvictable(),
		evictions: tr.Evictions, version: tr.Version(), blockings: tr.Blockings()}
	c.added = tr.Walk(func(e g2.EntryState) { c.order += fmt.Sprintf("%d@%d ", e.ID, e.Added) })
	return c
}
