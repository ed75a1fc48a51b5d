package record

import "fmt"

// CheckSnapshot runs the invariant checker on a recorded state
// (docs/invariants.md, R-1 to R-3).
func CheckSnapshot(s *Snapshot, r *Record) error {
	idle := 0
	seen := map[int32]bool{}
	for i, sl := range s.G1 {
		switch sl.State {
		case SlotFree:
			if sl.Block >= 0 {
				return fmt.Errorf("R-1: free slot %d holds block %d", i, sl.Block)
			}
		case SlotIdle:
			idle++
			if sl.QueuePos < 0 || seen[sl.QueuePos] {
				return fmt.Errorf("R-2: idle slot %d has queue position %d", i, sl.QueuePos)
			}
			seen[sl.QueuePos] = true
		case SlotPrivate, SlotActive, SlotHeld, SlotReserved:
		default:
			return fmt.Errorf("R-1: slot %d has unknown state %q", i, sl.State)
		}
		if sl.State != SlotIdle && sl.QueuePos >= 0 {
			return fmt.Errorf("R-2: slot %d (%c) has a queue position", i, sl.State)
		}
	}
	for q := int32(0); q < int32(idle); q++ {
		if !seen[q] {
			return fmt.Errorf("R-2: queue positions are not 0..%d", idle-1)
		}
	}
	if d := r.Domain[s.Info.rankIndex(r)]; d >= 0 {
		if len(s.G2) > r.G2Capacity[d] {
			return fmt.Errorf("R-3: %d G2 entries exceed capacity %d", len(s.G2), r.G2Capacity[d])
		}
		for _, e := range s.G2 {
			if e.State != EntryResident && e.Order >= 0 {
				return fmt.Errorf("R-3: %s entry %s is in the eviction order", string(e.State), r.BlockName(e.Block))
			}
		}
	}
	return nil
}

func (p PassInfo) rankIndex(r *Record) int { return r.RankIndex(p.Rank.Worker, p.Rank.Rank) }
