package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/report"
)

// TestAgentxProfileRecycles re-expresses dynamo's
// test_agentx_g2.py::test_profile_recycles_cache_identity_and_stops_at_cutoff:
// a 0.7 s profile with no grace, cold or warmed, with and without G2. The
// lane replays its snapshot play, then whole instances of the play; no
// request arrives at or after the cutoff, nothing is in flight at the end,
// the run finishes at the cutoff, and each instance has its own cache
// identity (content ids), none shared between instances.
func TestAgentxProfileRecycles(t *testing.T) {
	text := agentxTrace("weka")
	for _, scope := range []string{"", "dp_rank_local", "cluster_shared"} {
		for _, warmup := range []bool{false, true} {
			t.Run(fmt.Sprintf("scope=%s/warmup=%v", scope, warmup), func(t *testing.T) {
				sets := snapshotSets(fmt.Sprintf("traffic.load.agentic_warmup=%v", warmup),
					"traffic.load.agentic_profile={duration_seconds: 0.7, response_grace_seconds: 0}")
				res := runText(t, agentxConfig("weka", scope), text, sets...)
				p := res.Engine.Profile()
				t.Logf("start %v, cutoff %v, finished %v, plays %d (%d completed), issued %d, successful %d, never issued %d",
					p.StartMs, p.CutoffMs, p.FinishedAtMs, p.PlaysStarted, p.PlaysCompleted, p.Issued, p.Successful, p.NeverIssued)
				if !near(p.CutoffMs-p.StartMs, 700) || p.FinishedAtMs != p.CutoffMs || p.PlaysStarted <= 1 ||
					p.ClientInFlight != 0 || p.Canceled != 0 {
					t.Errorf("profile %+v: want a 700 ms window, finished at the cutoff, several plays, nothing in flight", *p)
				}
				if wu := res.Engine.Warmup(); warmup != (p.StartMs > 0) || wu != nil && wu.ProfileStartMs != p.StartMs {
					t.Errorf("profile start %v, warmup %+v", p.StartMs, wu)
				}
				plays := map[string]bool{}
				for _, r := range res.Records {
					if !r.DispatchedMs.IsSet() {
						continue
					}
					if r.ArrivalMs < 0 || r.ArrivalMs >= 700 {
						t.Errorf("%s arrives at %v ms", r.RequestID, r.ArrivalMs)
					}
					plays[strings.SplitN(r.RequestID, ":", 2)[0]] = true
				}
				if len(plays) != p.PlaysStarted || len(plays) < 2 {
					t.Errorf("records of plays %v; want %d", plays, p.PlaysStarted)
				}
				// plays_completed from the records (times from the profile
				// start): a play counts when all its requests completed
				// before the cutoff, 700 ms. The last play has never-issued
				// requests, so not every started play completes.
				done := map[string]bool{}
				for _, r := range res.Records {
					play := strings.SplitN(r.RequestID, ":", 2)[0]
					ok, seen := done[play]
					done[play] = (ok || !seen) && r.Completed() && r.TerminalMs < 700
				}
				n := 0
				for _, ok := range done {
					if ok {
						n++
					}
				}
				if p.PlaysCompleted != n || n < 1 || n >= p.PlaysStarted {
					t.Errorf("plays completed %d, from the records %d, of %d started", p.PlaysCompleted, n, p.PlaysStarted)
				}
				// Instances never share a cached block: no request of one
				// instance reuses tokens computed by another, so every
				// reuse stays within an instance (the play's own restore).
				for _, r := range res.Records {
					if r.FirstReused > 0 && !strings.HasSuffix(r.RequestID, "outer:2") {
						t.Errorf("%s reused %d tokens; only a play's restore may", r.RequestID, r.FirstReused)
					}
				}
			})
		}
	}
}

// TestAgentxProfileCancelsRestore re-expresses dynamo's
// test_agentx_g2.py::test_profile_cancels_incomplete_host_restore_without_draining_it:
// warmed, H2D at 0.001 GB/s, a 0.25 s profile without grace. The restore
// request waits 2,000 ms for its two G2 blocks and is still waiting at the
// cutoff: it is canceled then (dispatched, never admitted, no output), the
// run finishes at the cutoff, nothing is left in flight.
func TestAgentxProfileCancelsRestore(t *testing.T) {
	const slowH2D = "engine.workers.aggregated.kv_cache.host_offload.h2d_bandwidth_gbps=0.001"
	for _, scope := range []string{"dp_rank_local", "cluster_shared"} {
		t.Run(scope, func(t *testing.T) {
			res := runText(t, agentxConfig("weka", scope), agentxTrace("weka"), snapshotSets(slowH2D,
				"traffic.load.agentic_warmup=true",
				"traffic.load.agentic_profile={duration_seconds: 0.25, response_grace_seconds: 0}")...)
			p := res.Engine.Profile()
			if p.Canceled != 1 || p.ClientInFlight != 0 || !near(p.FinishedAtMs, p.StartMs+250) {
				t.Errorf("profile %+v: want one cancel, finished 250 ms after the start", *p)
			}
			var canceled []report.Request
			for _, r := range res.Records {
				if r.Status == report.StatusCanceled {
					canceled = append(canceled, r)
				}
			}
			if len(canceled) != 1 || !canceled[0].DispatchedMs.IsSet() || canceled[0].FirstAdmitMs.IsSet() ||
				canceled[0].Tokens != 0 || !strings.HasSuffix(canceled[0].RequestID, "outer:2") {
				t.Errorf("canceled records %+v; want the restore, dispatched, never admitted, no output", canceled)
			}
		})
	}
}

// profilePlay is a two-request weka play: r0 (4 tokens, 1 ms recorded),
// then r1 20 s later extending its prefix, with out output tokens.
func profilePlay(out int) string {
	return fmt.Sprintf(`{"id":"p","block_size":4,"hash_id_scope":"local","requests":[`+
		`{"t":0,"type":"s","model":"m","in":4,"out":1,"hash_ids":[1],"api_time":0.001},`+
		`{"t":20,"type":"s","model":"m","in":8,"out":%d,"hash_ids":[1,2]}]}`+"\n", out)
}

// TestProfileDefaults is a hand-derived profile with aisimulate's defaults
// (agentic_profile: {}: 3600 s, grace 30 s, drain 10 s, tree idle cap 300
// s, global idle cap 10 s) on one lane of profilePlay, fixed timing
// (prefill 2 ms; decode 1 ms, or 1,000 ms for the long outputs).
//
// The snapshot (seed 23, lane 0: u = 0.1078) cuts the 20 s span at t* =
// 6,078 ms: r0 is history, r1 waits 20,000 − t* = 13,922 ms. Nothing is
// outstanding from 0, so the global guard fires at 10,000 ms and moves r1
// there (shift 3,922 ms). r1 takes R = 2 + (out − 1) × decode ms. Each
// later instance starts at P: r0 runs [P, P+2]; r1 would be ready at
// P + 20,001 (r0's end + 19,999 ms, after its gate P + 20,000), but the
// global guard fires 10,000 ms after r0's end, at P + 10,002 (shift 9,999
// ms); the instance ends at P + 10,002 + R, so instances start every
// 10,002 + R ms from P1 = 10,000 + R. A request is issued only before the
// cutoff D = 3,600,000 ms; one still running at D + 30,000 is canceled.
//
//   - out 1 (R = 2): P_k = 10,002 + (k−1) × 10,004; k ≤ 359 start before
//     D; r1 of instance 359 would arrive at 3,601,436 ≥ D and is never
//     issued. 360 plays, 1 + 358 × 2 + 1 = 718 requests, all successful;
//     the last ends at 3,591,436, so the run finishes at D. The guard
//     fired 1 + 358 times.
//   - out 21, decode 1,000 ms (R = 20,002): P_k = 30,002 + (k−1) × 30,004;
//     instance 119 starts at 3,570,474, its r1 runs [3,580,476,
//     3,600,478]: past D, within grace, it completes. 120 plays, 239
//     requests, all successful, finished at 3,600,478.
//   - out 61, decode 1,000 ms (R = 60,002): P_k = 70,002 + (k−1) × 70,004;
//     instance 51 starts at 3,570,202, its r1 starts at 3,580,204 and would
//     end at 3,640,206, after the grace end 3,630,000: it is canceled then
//     (mid-pass: its rank is aborted at the pass end, the client's cancel
//     is at 3,630,000). 52 plays, 103 requests, 102 successful, 1 canceled,
//     finished at 3,630,000.
//
// plays_completed counts the plays whose every request completed before
// D: out 1, 359 (all but instance 359, whose r1 was never issued); out
// 21, 119 (instance 119's r1 completes in grace, at 3,600,478 > D, so
// its play does not count though every request succeeded); out 61, 51
// (instance 51's r1 is canceled).
func TestProfileDefaults(t *testing.T) {
	cases := []struct {
		out, decodeMs                                    int
		plays, issued, successful, canceled, neverIssued int
		finished                                         float64
		shifts, completed                                int
	}{
		{1, 1, 360, 718, 718, 0, 1, 3_600_000, 359, 359},
		{21, 1000, 120, 239, 239, 0, 0, 3_600_478, 120, 119},
		{61, 1000, 52, 103, 102, 1, 0, 3_630_000, 52, 51},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("out=%d", c.out), func(t *testing.T) {
			cfg := strings.NewReplacer("capacity: {type: fixed, blocks: 3}", "capacity: {type: fixed, blocks: 64}",
				"decode_ms: 1}", fmt.Sprintf("decode_ms: %d}", c.decodeMs)).Replace(agentxConfig("weka", ""))
			res := runText(t, cfg, profilePlay(c.out), snapshotSets("traffic.load.agentic_profile={}")...)
			p := res.Engine.Profile()
			if p.PlaysStarted != c.plays || p.Issued != c.issued || p.Successful != c.successful ||
				p.Canceled != c.canceled || p.NeverIssued != c.neverIssued || p.ClientInFlight != 0 {
				t.Errorf("plays %d, issued %d, successful %d, canceled %d, never issued %d, in flight %d; want %d, %d, %d, %d, %d, 0",
					p.PlaysStarted, p.Issued, p.Successful, p.Canceled, p.NeverIssued, p.ClientInFlight,
					c.plays, c.issued, c.successful, c.canceled, c.neverIssued)
			}
			if p.PlaysCompleted != c.completed {
				t.Errorf("plays completed %d; want %d", p.PlaysCompleted, c.completed)
			}
			if want := fmt.Sprintf(`"plays_started": %d, "plays_completed": %d,`, c.plays, c.completed); !strings.Contains(string(res.PredictionJSON()), want) {
				t.Errorf("prediction.json lacks %s", want)
			}
			if float64(p.FinishedAtMs) != c.finished || p.CutoffMs != 3_600_000 || p.GraceEndMs != 3_630_000 {
				t.Errorf("finished %v, cutoff %v, grace end %v; want %v, 3,600,000, 3,630,000",
					p.FinishedAtMs, p.CutoffMs, p.GraceEndMs, c.finished)
			}
			if len(p.IdleShifts) != c.shifts || p.IdleShifts[0].AtMs != 10_000 || !near(p.IdleShifts[1].ByMs, 9_999) {
				t.Errorf("%d idle shifts, first %+v, second %+v; want %d, at 10,000 ms, then by 9,999 ms",
					len(p.IdleShifts), p.IdleShifts[0], p.IdleShifts[1], c.shifts)
			}
			if got := res.Summary.CompletedRequests; got != c.successful {
				t.Errorf("summary: %d completed; want %d", got, c.successful)
			}
		})
	}
}

// TestAgenticReportSections: prediction.json carries the snapshot cuts,
// the warmup's phases and the profile as top-level sections beside the
// summary, computed from the run (docs/model/agentic.md ("Report")).
func TestAgenticReportSections(t *testing.T) {
	res := runText(t, agentxConfig("weka", "dp_rank_local"), agentxTrace("weka"), snapshotSets(
		"traffic.load.agentic_warmup=true", "traffic.load.agentic_profile={duration_seconds: 0.7, response_grace_seconds: 0}")...)
	var doc struct {
		Snapshots []struct {
			Seed    uint64  `json:"seed"`
			TStarMs float64 `json:"t_star_ms"`
			History int     `json:"history_requests"`
		} `json:"agentic_snapshots"`
		Phases struct {
			Phase          string  `json:"phase"`
			ProfileStartMs float64 `json:"profile_start_ms"`
			Lanes          []struct {
				WarmupCompleted int `json:"warmup_completed"`
			} `json:"lanes"`
		} `json:"agentic_phases"`
		Profile struct {
			CutoffMs     float64 `json:"admission_cutoff_ms"`
			FinishedAtMs float64 `json:"finished_at_ms"`
			PlaysStarted int     `json:"plays_started"`
		} `json:"agentic_profile"`
	}
	if err := json.Unmarshal(res.PredictionJSON(), &doc); err != nil {
		t.Fatal(err)
	}
	cut := res.Engine.Snapshots()[0]
	if len(doc.Snapshots) != 1 || doc.Snapshots[0].Seed != snapshotSeed || doc.Snapshots[0].TStarMs != float64(cut.TStarMs) ||
		doc.Snapshots[0].History != 1 {
		t.Errorf("agentic_snapshots %+v; want seed %d, t* %v, 1 historical request", doc.Snapshots, snapshotSeed, cut.TStarMs)
	}
	if doc.Phases.Phase != "profile" || doc.Phases.ProfileStartMs != 22 || len(doc.Phases.Lanes) != 1 || doc.Phases.Lanes[0].WarmupCompleted != 10 {
		t.Errorf("agentic_phases %+v; want the profile phase from 22 ms, 10 warmups", doc.Phases)
	}
	if doc.Profile.CutoffMs != 722 || doc.Profile.FinishedAtMs != 722 || doc.Profile.PlaysStarted != 3 {
		t.Errorf("agentic_profile %+v; want the cutoff and finish at 722 ms, 3 plays", doc.Profile)
	}
}

// TestAgentxProfilePD runs the two profile cases of dynamo's
// test_agentx_g2.py on one prefill and one decode worker sharing a
// cluster_shared G2 (aisimulate supports 1P1D profiles): the recycled
// profile stops at its cutoff with nothing in flight, and the restore that
// waits 2,000 ms for H2D on the prefill rank is canceled at the cutoff.
func TestAgentxProfilePD(t *testing.T) {
	text := agentxTrace("weka")
	res := runText(t, pdConfig(1), text, snapshotSets("traffic.load.agentic_warmup=true",
		"traffic.load.agentic_profile={duration_seconds: 0.7, response_grace_seconds: 0}")...)
	p := res.Engine.Profile()
	if !near(p.CutoffMs-p.StartMs, 700) || p.FinishedAtMs != p.CutoffMs || p.PlaysStarted <= 1 || p.ClientInFlight != 0 {
		t.Errorf("recycled P/D profile %+v", *p)
	}
	res = runText(t, pdConfig(1), text, snapshotSets("traffic.load.agentic_warmup=true",
		"engine.workers.prefill.kv_cache.host_offload.h2d_bandwidth_gbps=0.001",
		"traffic.load.agentic_profile={duration_seconds: 0.25, response_grace_seconds: 0}")...)
	p = res.Engine.Profile()
	if p.Canceled != 1 || p.ClientInFlight != 0 || !near(p.FinishedAtMs, p.StartMs+250) {
		t.Errorf("P/D cancel profile %+v: want one cancel, finished 250 ms after the start", *p)
	}
}

// TestProfileTreeGuard: a play's tree idle guard (300 s by default)
// shortens its own idle timers while the global guard (here longer than
// the profile) does not fire. Each instance of a weka play whose second
// request starts 400 s after the first (in another stream, held by a
// replay barrier on the first) runs it 300,002 ms after the first: 300 s
// after the first ended, 2 ms after it started.
func TestProfileTreeGuard(t *testing.T) {
	trace := `{"id":"p","block_size":4,"hash_id_scope":"local","requests":[` +
		`{"t":0,"type":"s","model":"m","in":4,"out":1,"hash_ids":[1]},` +
		`{"t":400,"type":"s","model":"m","in":4,"out":1,"hash_ids":[2]}]}` + "\n"
	res := runText(t, agentxConfig("weka", ""), trace, snapshotSets(
		"traffic.load.agentic_profile={duration_seconds: 2000, global_idle_cap_seconds: 5000}")...)
	p := res.Engine.Profile()
	starts := map[string]float64{}
	for _, r := range res.Records {
		if r.DispatchedMs.IsSet() {
			starts[r.RequestID] = float64(r.ArrivalMs)
		}
	}
	for _, s := range p.IdleShifts {
		if s.Play < 0 {
			t.Errorf("global guard fired: %+v", s)
		}
	}
	for k := 1; k <= 3; k++ {
		a, b := starts[fmt.Sprintf("play%d:p:outer:0", k)], starts[fmt.Sprintf("play%d:p:outer:1", k)]
		if d := b - a - 300_002; d > 1e-6 || d < -1e-6 {
			t.Errorf("instance %d: outer:0 at %v, outer:1 at %v; want 300,002 ms apart", k, a, b)
		}
	}
}

// TestCancelDrainChangesNothing: cancel_drain_seconds is accepted and
// bounds nothing (docs/model/agentic.md, "Decision (cancel drain)"): the
// out = 61 case of TestProfileDefaults, whose last request is canceled
// mid-pass at the grace end, gives byte-identical prediction.json and
// requests.jsonl with a drain of 0, 10 (the default) and 100,000 s.
func TestCancelDrainChangesNothing(t *testing.T) {
	cfg := strings.NewReplacer("capacity: {type: fixed, blocks: 3}", "capacity: {type: fixed, blocks: 64}",
		"decode_ms: 1}", "decode_ms: 1000}").Replace(agentxConfig("weka", ""))
	var pred, reqs []byte
	for i, drain := range []string{"10", "0", "100000"} {
		res := runText(t, cfg, profilePlay(61), snapshotSets("traffic.load.agentic_profile={cancel_drain_seconds: "+drain+"}")...)
		if p := res.Engine.Profile(); p.Canceled != 1 {
			t.Fatalf("drain %s: %d canceled; want the one at the grace end", drain, p.Canceled)
		}
		if i == 0 {
			pred, reqs = res.PredictionJSON(), res.RequestsJSONL()
			continue
		}
		if !bytes.Equal(res.PredictionJSON(), pred) || !bytes.Equal(res.RequestsJSONL(), reqs) {
			t.Errorf("drain %s s changes the report", drain)
		}
	}
}
