package state

import (
	"math"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/wasm/proto"
)

// Card is one card of a results row: its element id, title, value (with
// a unit) and the line under it.
type Card struct {
	ID, Key, Value, Unit, Sub string
}

// AgenticCards are the run view's cards for an agentic run's load-control
// sections (docs/model/agentic.md ("Report")): the snapshot, the warmup
// and the profile's requests and deadlines, each only when its control is
// on; nil without agentic sections. Times after the snapshot card are
// counted from the profile's start (the warmup barrier, or 0), as the
// summary's are.
func AgenticCards(a *proto.Agentic) []Card {
	if a == nil {
		return nil
	}
	var cards []Card
	if len(a.Lanes) > 0 {
		var hist, live, primers int64
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, l := range a.Lanes {
			hist, live, primers = hist+int64(l.History), live+int64(l.Remaining), primers+int64(l.Primers)
			lo, hi = min(lo, l.TStarMs), max(hi, l.TStarMs)
		}
		cut := "cut at " + MsThousands(lo) + " ms"
		if hi != lo {
			cut = "cuts at " + MsThousands(lo) + "–" + MsThousands(hi) + " ms"
		}
		cards = append(cards, Card{ID: "card-ag-snapshot", Key: "Snapshot", Value: Thousands(int64(len(a.Lanes))),
			Unit: plural(len(a.Lanes), "lane", "lanes"),
			Sub: "seed " + strconv.FormatUint(a.Seed, 10) + "; " + cut + " of the recorded span; " + Thousands(hist) + " history, " +
				Thousands(live) + " live requests, " + Thousands(primers) + " " + plural(int(primers), "primer", "primers")})
	}
	if w := a.Warmup; w != nil {
		var primers, warmups int64
		for _, l := range w.Lanes {
			primers, warmups = primers+int64(l.Primers), warmups+int64(l.Warmups)
		}
		sub := "measurement starts at the barrier, " + MsThousands(w.BarrierMs) + " ms (preparation ended at " +
			MsThousands(w.QuiescentMs) + " ms); " + Thousands(primers) + " " + plural(int(primers), "primer", "primers") + " completed"
		if w.BarrierMs < 0 {
			sub = "the barrier never opened"
		}
		cards = append(cards, Card{ID: "card-ag-warmup", Key: "Warmup completed", Value: Thousands(warmups),
			Unit: plural(int(warmups), "request", "requests"), Sub: sub})
	}
	if p := a.Profile; p != nil {
		cards = append(cards, Card{ID: "card-ag-requests", Key: "Profile requests", Value: Thousands(int64(p.Successful)) + " / " +
			Thousands(int64(p.Issued)), Unit: "successful / issued",
			Sub: Thousands(int64(p.PlaysStarted)) + " plays started, " + Thousands(int64(p.PlaysCompleted)) + " completed before the cutoff; " + Thousands(int64(p.Canceled)) + " canceled at the grace end, " +
				Thousands(int64(p.NeverIssued)) + " never issued (due at or after the cutoff)"})
		drain := "drained: nothing in flight at the end"
		if p.InFlight > 0 {
			drain = Thousands(int64(p.InFlight)) + " still in flight at the end"
		}
		if !p.Closed {
			drain = "admission never closed"
		}
		cards = append(cards, Card{ID: "card-ag-deadline", Key: "Profile cutoff", Value: MsThousands(since(p.CutoffMs, p.StartMs)),
			Unit: "ms", Sub: "grace ends at " + MsThousands(since(p.GraceEndMs, p.StartMs)) + " ms, finished at " +
				MsThousands(since(p.FinishedAtMs, p.StartMs)) + " ms (from the profile start, " + MsThousands(p.StartMs) + " ms); " +
				Thousands(int64(p.IdleShifts)) + " idle " + plural(p.IdleShifts, "shift", "shifts") + "; " + drain})
	}
	return cards
}

// AgenticLaneRow is one lane of the agentic per-lane table.
type AgenticLaneRow struct {
	Lane, Play, TStar, Span, History, Live, Primers, Warmups string
}

// AgenticLanes are the per-lane rows: each lane's snapshot cut and, with
// warmup, its completed preparation ("–" without it).
func AgenticLanes(a *proto.Agentic) []AgenticLaneRow {
	if a == nil {
		return nil
	}
	rows := make([]AgenticLaneRow, 0, len(a.Lanes))
	for i, l := range a.Lanes {
		r := AgenticLaneRow{Lane: strconv.Itoa(l.Lane), Play: strconv.Itoa(l.Play), TStar: MsThousands(l.TStarMs),
			Span: MsThousands(l.FirstMs) + "–" + MsThousands(l.LastMs), History: Thousands(int64(l.History)),
			Live: Thousands(int64(l.Remaining)), Primers: Thousands(int64(l.Primers)), Warmups: "–"}
		if w := a.Warmup; w != nil && i < len(w.Lanes) {
			r.Primers += " / " + Thousands(int64(w.Lanes[i].Primers))
			r.Warmups = Thousands(int64(w.Lanes[i].Warmups))
		}
		rows = append(rows, r)
	}
	return rows
}

// MsThousands writes a time in milliseconds with thousands separators and
// at most 3 decimals ("3,600,000", "91.172"); "–" for a missing value
// (negative or NaN).
func MsThousands(v float64) string {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	s := strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
	whole, frac, ok := strings.Cut(s, ".")
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return s
	}
	if ok {
		return Thousands(n) + "." + frac
	}
	return Thousands(n)
}

// since is t − from, or −1 when t is unset.
func since(t, from float64) float64 {
	if t < 0 || from < 0 {
		return -1
	}
	return t - from
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// AgenticCompareColumns are the compare table's agentic columns, shown
// when a compared run has agentic sections (AgenticCompareRow's cells, in
// order).
var AgenticCompareColumns = []string{"lanes", "warmup done", "barrier ms", "successful / issued", "plays started / completed",
	"canceled / never issued", "cutoff ms"}

// AgenticCompareRow is one compared run's agentic cells (AgenticCompareColumns):
// the figures of its agentic cards (AgenticCards: the snapshot's lanes,
// the warmup's completed requests, the profile's successful / issued and
// its cutoff from the profile start) and those their lines hold (the
// barrier, plays started / completed, canceled / never issued), written
// as the cards write them; "–" where the run's control is off (and every
// cell for a run without agentic sections).
func AgenticCompareRow(a *proto.Agentic) []string {
	cells := make([]string, len(AgenticCompareColumns))
	for i := range cells {
		cells[i] = "–"
	}
	if a == nil {
		return cells
	}
	for _, c := range AgenticCards(a) {
		switch c.ID {
		case "card-ag-snapshot":
			cells[0] = c.Value
		case "card-ag-warmup":
			cells[1] = c.Value
		case "card-ag-requests":
			cells[3] = c.Value
		case "card-ag-deadline":
			cells[6] = c.Value
		}
	}
	if w := a.Warmup; w != nil {
		cells[2] = MsThousands(w.BarrierMs)
	}
	if p := a.Profile; p != nil {
		cells[4] = Thousands(int64(p.PlaysStarted)) + " / " + Thousands(int64(p.PlaysCompleted))
		cells[5] = Thousands(int64(p.Canceled)) + " / " + Thousands(int64(p.NeverIssued))
	}
	return cells
}
