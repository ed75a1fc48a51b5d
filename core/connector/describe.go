package connector

import (
	"strings"

	"github.com/kvsim/kvsim/core/g2"
)

// Policy is a profile's G2 policy in three lines for people: what its
// eviction ranks by, when it touches (refreshes) entries, and what it
// stores. Describe builds it from the rules table, so the page and the CLI
// never copy prose about a profile.
type Policy struct {
	Evicts, Touches, Stores string
}

// Line is the policy in one line.
func (p Policy) Line() string {
	return "evicts " + p.Evicts + "; touches " + p.Touches + "; stores " + p.Stores
}

// Describe says what r does (docs/model/g2.md ("The rules table")).
func Describe(r Rules) Policy {
	var p Policy
	switch r.Eviction {
	case g2.CohortLRU:
		p.Evicts = "the least recently used entries (one recency per completed store)"
	case g2.Ranked:
		p.Evicts = "the lowest-ranked entries (ranked when their store is prepared, moved only by touches)"
	case g2.FreeQueue:
		p.Evicts = "the entries that became free first (no touches)"
	}
	var when []string
	if r.TouchOnLookup {
		when = append(when, "at every lookup")
	}
	if r.TouchAfterStore {
		when = append(when, "after every store")
	}
	if r.RerankOnFinish {
		when = append(when, "when a request finishes (its prefix tail first to go)")
	}
	p.Touches = "never"
	if len(when) > 0 {
		p.Touches = "the prompt's blocks " + strings.Join(when, " and ")
	}
	scope := "prompt blocks"
	if r.StoreScope == AllComputedBlocks {
		scope = "prompt and answer (decode) blocks"
	}
	timing := "as they are computed"
	if r.StoreTiming == PreviousPasses {
		timing = "a pass after they are computed"
	}
	p.Stores = scope + ", " + timing
	if r.StoreAtFinish {
		p.Stores += " and at finish"
	}
	if r.RoomLimited {
		p.Stores += "; as many as fit"
	} else {
		p.Stores += "; a range only when all of it fits"
	}
	return p
}
