package replay

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomWeka writes n random weka sessions: top-level requests extending
// or forking earlier prefixes, and subagents (blocking or background) with
// their own requests, on the session clock.
func randomWeka(rng *rand.Rand, n int) string {
	var b strings.Builder
	for s := range n {
		var reqs []string
		t := 0.0
		var prefixes [][]int
		next := 1
		req := func(at float64) string {
			var h []int
			if len(prefixes) > 0 && rng.IntN(3) > 0 {
				h = append(h, prefixes[rng.IntN(len(prefixes))]...)
			}
			for range 1 + rng.IntN(3) {
				h = append(h, next)
				next++
			}
			prefixes = append(prefixes, h)
			in := 4*len(h) - rng.IntN(4)
			return fmt.Sprintf(`{"t":%.3f,"type":"s","model":"m","in":%d,"out":%d,"hash_ids":%s,"api_time":%.3f}`,
				at, in, 1+rng.IntN(4), strings.ReplaceAll(fmt.Sprint(h), " ", ","), rng.Float64()*0.05)
		}
		for range 2 + rng.IntN(5) {
			t += rng.Float64() * 0.2
			if len(reqs) > 0 && rng.IntN(4) == 0 {
				status := []string{"completed", "async_launched"}[rng.IntN(2)]
				var inner []string
				it := t
				for range 1 + rng.IntN(3) {
					inner = append(inner, req(it))
					it += rng.Float64() * 0.05
				}
				reqs = append(reqs, fmt.Sprintf(`{"t":%.3f,"type":"subagent","agent_id":"a%d","subagent_type":"E","status":%q,"requests":[%s]}`,
					t, len(reqs), status, strings.Join(inner, ",")))
				continue
			}
			reqs = append(reqs, req(t))
		}
		fmt.Fprintf(&b, `{"id":"s%d","block_size":4,"hash_id_scope":"local","requests":[%s]}`+"\n", s, strings.Join(reqs, ","))
	}
	return b.String()
}

// TestWekaRandomRuns runs random weka corpora through every agentic load
// control, aggregated and P/D, with the invariant checker on every pass: no run fails, stalls
// or loses a request (every issued request ends, completed or canceled).
func TestWekaRandomRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 60 {
		text := randomWeka(rng, 1+rng.IntN(3))
		scope := []string{"", "dp_rank_local", "cluster_shared"}[rng.IntN(3)]
		cfg := agentxConfig("weka", scope)
		if rng.IntN(3) == 0 {
			cfg = pdConfig(1)
		}
		cfg = strings.Replace(cfg, "agentic_lanes: 1", fmt.Sprintf("agentic_lanes: %d", 1+rng.IntN(3)), 1)
		cfg = strings.Replace(cfg, "capacity: {type: fixed, blocks: 3}", "capacity: {type: fixed, blocks: 64}", 1)
		cfg = strings.Replace(cfg, ", nested_timestamp_basis: absolute", "", 1)
		sets := []string{}
		if rng.IntN(4) > 0 {
			sets = append(sets, fmt.Sprintf("traffic.load.agentic_snapshot={seed: %d}", rng.IntN(100)))
			if rng.IntN(2) == 0 {
				sets = append(sets, "traffic.load.agentic_warmup=true")
			}
			if rng.IntN(2) == 0 {
				sets = append(sets, fmt.Sprintf("traffic.load.agentic_profile={duration_seconds: %.2f, response_grace_seconds: %.3f, global_idle_cap_seconds: 0.05}",
					0.2+rng.Float64(), rng.Float64()*0.01))
			}
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			res := runText(t, cfg, text, sets...)
			for _, r := range res.Records {
				if r.DispatchedMs.IsSet() && r.Status == "" {
					t.Fatalf("%s was dispatched and never ended (sets %v)\n%s", r.RequestID, sets, text)
				}
			}
		})
	}
}
