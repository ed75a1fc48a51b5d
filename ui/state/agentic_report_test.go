package state

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/wasm/proto"
)

// TestAgenticCards: the cards of each agentic section, with thousands
// separators, units and profile times counted from the profile's start;
// a section whose control is off has no card.
func TestAgenticCards(t *testing.T) {
	if AgenticCards(nil) != nil {
		t.Error("cards without agentic sections")
	}
	a := &proto.Agentic{Seed: 7,
		Lanes: []proto.AgenticLane{{Lane: 0, TStarMs: 91.1724, LastMs: 300, History: 1, Remaining: 3, Primers: 1},
			{Lane: 1, Play: 0, TStarMs: 150, LastMs: 300, History: 2, Remaining: 2, Primers: 1}},
		Warmup: &proto.AgenticWarmup{BarrierMs: 1202.5, QuiescentMs: 1200, Lanes: []proto.AgenticWarmupLane{{Primers: 1, Warmups: 10}, {Primers: 1, Warmups: 10}}},
		Profile: &proto.AgenticProfile{StartMs: 1202.5, CutoffMs: 3_601_202.5, GraceEndMs: 3_631_202.5, FinishedAtMs: 3_631_202.5,
			Closed: true, PlaysStarted: 1234, PlaysCompleted: 1233, Issued: 5678, Successful: 5677, Canceled: 1, NeverIssued: 2, IdleShifts: 359},
	}
	cards := AgenticCards(a)
	want := []Card{
		{ID: "card-ag-snapshot", Key: "Snapshot", Value: "2", Unit: "lanes",
			Sub: "seed 7; cuts at 91.172–150 ms of the recorded span; 3 history, 5 live requests, 2 primers"},
		{ID: "card-ag-warmup", Key: "Warmup completed", Value: "20", Unit: "requests",
			Sub: "measurement starts at the barrier, 1,202.5 ms (preparation ended at 1,200 ms); 2 primers completed"},
		{ID: "card-ag-requests", Key: "Profile requests", Value: "5,677 / 5,678", Unit: "successful / issued",
			Sub: "1,234 plays started, 1,233 completed before the cutoff; 1 canceled at the grace end, 2 never issued (due at or after the cutoff)"},
		{ID: "card-ag-deadline", Key: "Profile cutoff", Value: "3,600,000", Unit: "ms",
			Sub: "grace ends at 3,630,000 ms, finished at 3,630,000 ms (from the profile start, 1,202.5 ms); 359 idle shifts; drained: nothing in flight at the end"},
	}
	if len(cards) != len(want) {
		t.Fatalf("%d cards: %+v", len(cards), cards)
	}
	for i := range want {
		if cards[i] != want[i] {
			t.Errorf("card %d:\n got %+v\nwant %+v", i, cards[i], want[i])
		}
	}
	// a snapshot alone: one card; one lane reads "lane"
	one := &proto.Agentic{Seed: 23, Lanes: a.Lanes[:1]}
	if c := AgenticCards(one); len(c) != 1 || c[0].Unit != "lane" || !strings.Contains(c[0].Sub, "cut at 91.172 ms") {
		t.Errorf("snapshot only: %+v", c)
	}
	// a profile still holding requests says so
	p := *a.Profile
	p.InFlight = 1_500
	if c := AgenticCards(&proto.Agentic{Profile: &p}); len(c) != 2 || !strings.HasSuffix(c[1].Sub, "1,500 still in flight at the end") {
		t.Errorf("in flight: %+v", c)
	}
}

// TestAgenticCompareRow: a compared run's agentic cells are its cards'
// figures and their lines' (barrier, plays, canceled / never issued);
// "–" for a section whose control is off, and for a run without any.
func TestAgenticCompareRow(t *testing.T) {
	a := &proto.Agentic{Seed: 7,
		Lanes:  []proto.AgenticLane{{Lane: 0, TStarMs: 91}, {Lane: 1, TStarMs: 150}},
		Warmup: &proto.AgenticWarmup{BarrierMs: 1202.5, QuiescentMs: 1200, Lanes: []proto.AgenticWarmupLane{{Primers: 1, Warmups: 10}, {Primers: 1, Warmups: 10}}},
		Profile: &proto.AgenticProfile{StartMs: 1202.5, CutoffMs: 3_601_202.5, GraceEndMs: 3_631_202.5, FinishedAtMs: 3_631_202.5,
			Closed: true, PlaysStarted: 1234, PlaysCompleted: 1233, Issued: 5678, Successful: 5677, Canceled: 1, NeverIssued: 2},
	}
	want := "2|20|1,202.5|5,677 / 5,678|1,234 / 1,233|1 / 2|3,600,000"
	if got := strings.Join(AgenticCompareRow(a), "|"); got != want {
		t.Errorf("full row %s; want %s", got, want)
	}
	if n := len(AgenticCompareColumns); n != 7 {
		t.Errorf("%d columns", n)
	}
	if got := strings.Join(AgenticCompareRow(&proto.Agentic{Seed: 1, Lanes: a.Lanes}), "|"); got != "2|–|–|–|–|–|–" {
		t.Errorf("snapshot only: %s", got)
	}
	if got := strings.Join(AgenticCompareRow(nil), "|"); got != "–|–|–|–|–|–|–" {
		t.Errorf("no agentic sections: %s", got)
	}
}

// TestAgenticLanes: one row per lane, the warmup's counts beside the cut.
func TestAgenticLanes(t *testing.T) {
	a := &proto.Agentic{Lanes: []proto.AgenticLane{{Lane: 0, Play: 3, TStarMs: 1234.5, FirstMs: 0, LastMs: 20_000, History: 1, Remaining: 1200, Primers: 1}}}
	want := AgenticLaneRow{Lane: "0", Play: "3", TStar: "1,234.5", Span: "0–20,000", History: "1", Live: "1,200", Primers: "1", Warmups: "–"}
	if r := AgenticLanes(a); len(r) != 1 || r[0] != want {
		t.Errorf("rows %+v, want %+v", r, want)
	}
	a.Warmup = &proto.AgenticWarmup{Lanes: []proto.AgenticWarmupLane{{Primers: 1, Warmups: 10}}}
	if r := AgenticLanes(a); r[0].Primers != "1 / 1" || r[0].Warmups != "10" {
		t.Errorf("warm rows %+v", r)
	}
}

func TestMsThousands(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 91.17249: "91.172", 3_600_000: "3,600,000", 1202.5: "1,202.5", -1: "–"} {
		if got := MsThousands(in); got != want {
			t.Errorf("MsThousands(%v) = %q, want %q", in, got, want)
		}
	}
}
