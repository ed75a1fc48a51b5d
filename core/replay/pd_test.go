package replay

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/traces"
)

// TestRestorePD is docs/model/cases.md ("Case B: restore from G2") in P/D
// form with a cluster_shared pool (issue 6): the restore takes 8 tokens from
// G2 on the prefill worker, its admission history shows both pools, and the
// shared pool is one domain of 8 blocks.
func TestRestorePD(t *testing.T) {
	res := runExample(t, "g2-restore-pd.yaml", nil, traces.Open)
	if got := res.Summary.CompletedRequests; got != 4 {
		t.Fatalf("completed %d; want 4", got)
	}
	if d := res.Summary.Domains; len(d) != 1 || d[0].CapacityBlocks != 8 {
		t.Errorf("g2_domains %+v; want one pool of 8 blocks", d)
	}
	for _, r := range res.Records {
		if r.PrefillWorker != 0 || r.DecodeWorker != 0 {
			t.Errorf("%s: prefill %d decode %d; want 0 and 0", r.RequestID, r.PrefillWorker, r.DecodeWorker)
		}
		var pools []string
		for _, a := range r.Admissions {
			pools = append(pools, a.Pool)
		}
		if strings.Join(pools, ",") != "prefill,decode" {
			t.Errorf("%s: admission pools %v; want prefill then decode", r.RequestID, pools)
		}
		want := 0
		if r.RequestID == "restore" {
			want = 8
		}
		if r.FirstHost != want {
			t.Errorf("%s: %d tokens from G2; want %d", r.RequestID, r.FirstHost, want)
		}
		if r.Tokens != 1 {
			t.Errorf("%s: %d visible tokens; want 1", r.RequestID, r.Tokens)
		}
		t.Logf("%s arrival %v prefill admit %v held %v reserved %v activated %v decode admit %v first token %v",
			r.RequestID, r.ArrivalMs, r.PrefillAdmitMs, r.SourceHeldMs, r.DestinationReservedMs,
			r.DestinationActivatedMs, r.DecodeAdmitMs, r.FirstTokenMs)
	}
	t.Logf("%s", res.RequestsJSONL())
}
