package connector_test

import (
	"testing"

	"github.com/kvsim/kvsim/core/connector"
)

// TestStoreHook_RoomLimitedRetryFollowsTheCursor: with no room in G2, the
// room-limited store hook remembers that its cursor block was absent and,
// until the tier creates an entry, answers without looking again. The
// memory is for one cursor position: after a rescan (admission) moves the
// cursor back to block 0, whose key is present, the hook must scan again
// and step the cursor over it, as the full hook does.
func TestStoreHook_RoomLimitedRetryFollowsTheCursor(t *testing.T) {
	for _, full := range []bool{true, false} {
		rules, err := connector.Profile(simple)
		if err != nil {
			t.Fatal(err)
		}
		g := newRig(rules, 16, 1)
		g.a.FullStoreHook = full
		x := g.request(0, 8, 1) // two full blocks
		g.compute(x, 8)
		g.a.ObserveCompletedBlocks(x, 8, 8, 0) // stores block 0, the only room
		if x.Host.Cursor != 1 || g.dom.Tier.Room() != 0 {
			t.Fatalf("full hook %v: cursor %d room %d after the first store; want 1 and 0 (scenario broken)", full, x.Host.Cursor, g.dom.Tier.Room())
		}
		g.a.ObserveCompletedBlocks(x, 8, 8, 1) // block 1 absent, no room: nothing
		g.a.Admitted(x, 0)                     // the rescan: cursor back to block 0
		if x.Host.Cursor != 0 {
			t.Fatalf("full hook %v: cursor %d after the rescan; want 0", full, x.Host.Cursor)
		}
		g.a.ObserveCompletedBlocks(x, 8, 8, 2) // block 0 present: the cursor steps to 1
		if x.Host.Cursor != 1 {
			t.Errorf("full hook %v: cursor %d after the hook; want 1 (block 0 is in G2)", full, x.Host.Cursor)
		}
	}
}
