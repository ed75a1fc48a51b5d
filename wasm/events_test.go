package main

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/wasm/proto"
)

func ip(v int) *int   { return &v }
func bp(v bool) *bool { return &v }
func eventTexts(evs ...record.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, describeEvent(e).Text)
	}
	return out
}

// TestEventTextsAgree: the three contradictions a new user found in the
// pass view's event list are gone.
func TestEventTextsAgree(t *testing.T) {
	// A request that consumes its completed load: the lookup does not say
	// "miss" before an admission that reuses G2 tokens.
	got := eventTexts(
		record.Event{Kind: "lookup", Request: "s1t2", Result: "loaded", G1Hits: ip(0)},
		record.Event{Kind: "admit", Request: "s1t2", Reused: ip(8), G1: ip(0), Host: ip(8), Cursor: ip(2), Readmit: bp(false)})
	if strings.Contains(got[0], "miss") || !strings.Contains(got[0], "completed G2 load") || !strings.Contains(got[1], "G2 8") {
		t.Errorf("load then admission: %q", got)
	}
	// A lookup that misses G2 after reusing G1 blocks says so.
	got = eventTexts(record.Event{Kind: "lookup", Request: "s0t3", Result: "miss", G1Hits: ip(5)})
	if !strings.Contains(got[0], "5 blocks in G1") || !strings.HasSuffix(got[0], "miss") {
		t.Errorf("G1 hit, G2 miss: %q", got)
	}
	// Transfer texts name their request; none has an empty name.
	got = eventTexts(
		record.Event{Kind: "h2d_submit", Request: "restore", Transfer: 3, Blocks: []string{"seed#0", "seed#1"}},
		record.Event{Kind: "d2h_submit", Transfer: 4, Blocks: []string{"x#0"}})
	if !strings.Contains(got[0], "submitted for restore: seed#0, seed#1") || strings.Contains(got[1], "for :") {
		t.Errorf("transfers: %q", got)
	}
	// A decode rank's admission of a P/D handoff reuses the prefill
	// worker's tokens, not G1 or G2 ones.
	got = eventTexts(record.Event{Kind: "admit", Request: "r", Reused: ip(9), G1: ip(0), Host: ip(0), Cursor: ip(0), Readmit: bp(false), Handoff: bp(true)})
	if strings.Contains(got[0], "G1 0, G2 0") || !strings.Contains(got[0], "9 prompt tokens from the prefill worker") {
		t.Errorf("handoff: %q", got)
	}
	// The new causes read as sentences.
	got = eventTexts(
		record.Event{Kind: "admission_wait", Request: "s3t4", Needed: ip(48), Available: ip(28), InUse: ip(52), Reserved: ip(40), Held: ip(0), Headroom: ip(8)},
		record.Event{Kind: "start_load", Request: "s0t3", Result: "blocked", Reason: "G1 cannot reserve the load's blocks"},
		record.Event{Kind: "store_retry", Request: "B", From: ip(0), To: ip(2), Missing: ip(2), Room: ip(0)})
	for i, want := range []string{"s3t4 waits: needs 48 G1 blocks, 28 available (52 in use by requests, 40 reserved for loads",
		"s0t3 cannot start its G2 load: G1 cannot reserve", "B cannot store blocks 0 to 1: 2 not in G2, room for 0"} {
		if !strings.HasPrefix(got[i], want) {
			t.Errorf("%q; want prefix %q", got[i], want)
		}
	}
}

// TestEventTextsOfARun: in §A's (docs/model/cases.md) 192-block v0_24 run, no event text names
// an empty request, and every lookup that precedes an admission reusing
// G2 tokens in the same pass is a hit or a consumed load, never a miss.
func TestEventTextsOfARun(t *testing.T) {
	j := goldenJob(t, "connectors.yaml", nil)
	j.Passes = true
	j.Variants = []proto.Variant{{Label: "v024", Sets: []string{hostOffload + ".num_host_blocks=192", hostOffload + ".connector=offloading_v0_24"}}}
	p := indexAll(t, j.run(nil))
	rec := p.recs[0]
	loaded := 0
	for pass := 1; pass <= rec.NumLines(0); pass++ {
		evs, err := rec.Events(0, pass)
		if err != nil {
			t.Fatal(err)
		}
		lastLookup := map[string]string{}
		for _, e := range evs {
			text := describeEvent(e).Text
			if strings.Contains(text, "for :") || strings.HasPrefix(text, " ") {
				t.Fatalf("pass %d: %q names no request", pass, text)
			}
			switch e.Kind {
			case "lookup":
				lastLookup[e.Request] = e.Result
				if e.Result == "loaded" {
					loaded++
				}
			case "admit":
				if r, ok := lastLookup[e.Request]; ok && *e.Host > 0 && r == "miss" {
					t.Errorf("pass %d: %s looked up G2 with a miss, then reused %d G2 tokens", pass, e.Request, *e.Host)
				}
			}
		}
	}
	if loaded == 0 {
		t.Error("no consumed load in the run (scenario broken)")
	}
}
