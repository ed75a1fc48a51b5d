package connector_test

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/connector"
)

// TestDescribeFollowsTheRules: each profile's description differs from the
// others', and switching a rule that decides eviction order or what is
// stored changes the line.
func TestDescribeFollowsTheRules(t *testing.T) {
	seen := map[string]string{}
	for _, name := range connector.ProfileNames() {
		line := connector.Describe(profile(t, name)).Line()
		if other, ok := seen[line]; ok {
			t.Errorf("%s and %s share the description %q", name, other, line)
		}
		seen[line] = name
		t.Logf("%s: %s", name, line)
	}
	base := profile(t, v024)
	for _, edit := range []func(*connector.Rules){
		func(r *connector.Rules) { r.TouchOnLookup = false },
		func(r *connector.Rules) { r.TouchAfterStore = false },
		func(r *connector.Rules) { r.RerankOnFinish = true },
		func(r *connector.Rules) { r.StoreScope = connector.AllComputedBlocks },
		func(r *connector.Rules) { r.StoreTiming = connector.PreviousPasses },
		func(r *connector.Rules) { r.StoreAtFinish = true },
		func(r *connector.Rules) { r.RoomLimited = true },
		func(r *connector.Rules) { r.Eviction = profile(t, simple).Eviction },
	} {
		r := base
		edit(&r)
		if connector.Describe(r) == connector.Describe(base) {
			t.Errorf("a switched rule leaves the description %q", connector.Describe(r).Line())
		}
	}
	if s := connector.Describe(profile(t, simple)).Stores; !strings.Contains(s, "answer") {
		t.Errorf("SimpleCPU stores %q; want answer blocks named", s)
	}
}
