// Package connector owns the G2 connector profiles: the rules table of
// docs/model/g2.md ("The rules table") and the hooks that read it (lookup,
// start_load, on_admitted, observe_completed_blocks, finish_request,
// preempt_request, plus G1 source protection and transfer completion). The
// scheduler calls the hooks at fixed points of its pass and never looks at a
// profile name. Outside this package only the engine reads one Rules field:
// Eviction, to build each G2 tier with its profile's eviction policy.
//
// A Domain is one G2 tier with its transfer timing: private FIFO lanes for a
// dp_rank_local tier, or a fair-shared pool for a cluster_shared one. An
// Adapter is one DP rank's view: its hooks, prepared copies and fence.
package connector

import (
	"fmt"
	"slices"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/g2"
)

// StoreTiming says which tokens count as computed for a pass's store.
type StoreTiming uint8

const (
	SamePass       StoreTiming = iota // tokens scheduled in this pass included
	PreviousPasses                    // only tokens computed before this pass
)

// StoreScope says which full blocks may be stored.
type StoreScope uint8

const (
	PromptBlocks      StoreScope = iota // the prompt's full blocks
	AllComputedBlocks                   // prompt and output blocks
)

// SourceProtection says how G1 copies being read by a store are protected.
type SourceProtection uint8

const (
	// FenceReuse releases the copies normally but fences whoever reuses
	// their capacity until the store completes.
	FenceReuse SourceProtection = iota
	// HoldUntilCopied keeps an extra use on each copy until the store
	// completes, then drops them first block first.
	HoldUntilCopied
)

// PreemptWait says what a preemption waits for.
type PreemptWait uint8

const (
	OwnLatestStore PreemptWait = iota // the victim's latest store
	EveryTransfer                     // every copy in flight on the rank
)

// Rules is one connector profile: docs/model/g2.md ("The rules table"), one
// field per flag.
type Rules struct {
	Name            string
	Eviction        g2.Policy
	TouchOnLookup   bool
	TouchAfterStore bool
	RerankOnFinish  bool
	StoreTiming     StoreTiming
	StoreScope      StoreScope
	StoreAtFinish   bool
	// RoomLimited selects SimpleCPU's room-limited, unprotected store
	// admission; false is the offloading profiles' whole-range, protected
	// mode (docs/model/g2.md ("Store admission")).
	RoomLimited bool
	// CursorRescan restarts the store cursor at block 0 at every admission;
	// false moves it to the consumed loaded prefix (and leaves it otherwise).
	CursorRescan bool
	// PendingHitDefers makes a lookup that meets a pending entry defer; false
	// stops the scan there (a miss at that block).
	PendingHitDefers bool
	DeferOnOwnStore  bool
	DeferOnLoading   bool
	LookupPin        bool
	// LastBlockRule ends a G2 hit at floor((prompt_len−1)/B) blocks.
	LastBlockRule bool
	G1Sources     SourceProtection
	PreemptWait   PreemptWait
}

// Profile names (the config's host_offload.connector values).
const (
	OffloadingV024 = config.ConnectorOffloadingV024
	OffloadingV032 = config.ConnectorOffloadingV032
	SimpleCPUV032  = config.ConnectorSimpleCPUV032
)

// profiles is the rules table of docs/model/g2.md ("The rules table").
var profiles = map[string]Rules{
	OffloadingV024: {
		Name: OffloadingV024, Eviction: g2.CohortLRU,
		TouchOnLookup: true, TouchAfterStore: true, RerankOnFinish: false,
		StoreTiming: SamePass, StoreScope: PromptBlocks, StoreAtFinish: false,
		RoomLimited: false, CursorRescan: false,
		PendingHitDefers: true, DeferOnOwnStore: true, DeferOnLoading: true,
		LookupPin: false, LastBlockRule: false,
		G1Sources: FenceReuse, PreemptWait: OwnLatestStore,
	},
	OffloadingV032: {
		Name: OffloadingV032, Eviction: g2.Ranked,
		TouchOnLookup: false, TouchAfterStore: false, RerankOnFinish: true,
		StoreTiming: SamePass, StoreScope: PromptBlocks, StoreAtFinish: true,
		RoomLimited: false, CursorRescan: false,
		PendingHitDefers: true, DeferOnOwnStore: true, DeferOnLoading: true,
		LookupPin: false, LastBlockRule: false,
		G1Sources: FenceReuse, PreemptWait: OwnLatestStore,
	},
	SimpleCPUV032: {
		Name: SimpleCPUV032, Eviction: g2.FreeQueue,
		TouchOnLookup: false, TouchAfterStore: false, RerankOnFinish: false,
		StoreTiming: PreviousPasses, StoreScope: AllComputedBlocks, StoreAtFinish: true,
		RoomLimited: true, CursorRescan: true,
		PendingHitDefers: false, DeferOnOwnStore: false, DeferOnLoading: false,
		LookupPin: true, LastBlockRule: true,
		G1Sources: HoldUntilCopied, PreemptWait: EveryTransfer,
	},
}

// Profile returns the rules of the named profile.
func Profile(name string) (Rules, error) {
	r, ok := profiles[name]
	if !ok {
		return Rules{}, fmt.Errorf("unknown connector profile %q", name)
	}
	return r, nil
}

// ProfileNames lists the profiles in table order.
func ProfileNames() []string { return slices.Clone(config.Connectors) }
