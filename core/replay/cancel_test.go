package replay

import (
	"io"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/vtime"
)

// TestCancelDuringG2Restore cancels a request whose G2 restore is in
// flight (the situation of dynamo's
// test_agentx_g2.py::test_profile_cancels_incomplete_host_restore_without_draining_it,
// here without a profile): with H2D at 0.001 GB/s the restore request of
// _trace, gated at 200 ms, waits 2,000 ms for its two blocks (2 MB). After
// RunUntil(250) (the engine's clock at 200 ms, its last event, with the load
// in flight until 2,200 ms) it is canceled: it never was admitted, produced nothing, and
// leaves no G1 block in use, no G2 entry pinned or pending and no copy in
// flight; the invariant checker runs on every pass and at the cancel. Its
// dependent (finish) is never issued; the run ends without a stall.
func TestCancelDuringG2Restore(t *testing.T) {
	const slowH2D = "engine.workers.aggregated.kv_cache.host_offload.h2d_bandwidth_gbps=0.001"
	for _, scope := range []string{"dp_rank_local", "cluster_shared"} {
		t.Run(scope, func(t *testing.T) {
			cfg, err := config.Parse("c.yaml", ".", []byte(agentxConfig("weka", scope)), []string{slowH2D})
			if err != nil {
				t.Fatal(err)
			}
			wl, err := Workload(cfg, func(string) (io.ReadCloser, error) {
				return io.NopCloser(strings.NewReader(agentxTrace("weka"))), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			e, err := engine.New(cfg, wl, engine.Options{Check: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.RunUntil(250); err != nil {
				t.Fatal(err)
			}
			const restore = 2 // host-restore:outer:2
			rec := &e.Records[restore]
			rk := e.Ranks()[0]
			tier := rk.Host.Tier()
			if rec.RequestID != "host-restore:outer:2" || !rec.DispatchedMs.IsSet() || rec.FirstAdmitMs.IsSet() ||
				!rk.Host.HasWork() || tier.Used() == tier.NumEvictable() || rk.Pool.NumInUse() == 0 {
				t.Fatalf("before the cancel: %s dispatched %v admitted %v, copies in flight %v, G2 %d used %d evictable, G1 %d in use; want the restore waiting for its load",
					rec.RequestID, rec.DispatchedMs, rec.FirstAdmitMs, rk.Host.HasWork(), tier.Used(), tier.NumEvictable(), rk.Pool.NumInUse())
			}
			if !e.Cancel(restore) {
				t.Fatal("Cancel: the restore was not outstanding")
			}
			if rec.Status != report.StatusCanceled || rec.TerminalMs != e.Now() || e.Now() != vtime.Time(200) || rec.FirstAdmitMs.IsSet() || rec.Tokens != 0 {
				t.Errorf("canceled record: status %q at %v, admitted %v, %d tokens", rec.Status, rec.TerminalMs, rec.FirstAdmitMs, rec.Tokens)
			}
			if !rk.Idle() || rk.Host.HasWork() || rk.Pool.NumInUse() != 0 || tier.Used() != tier.NumEvictable() {
				t.Errorf("after the cancel: idle %v, copies in flight %v, G1 %d in use, G2 %d used %d evictable",
					rk.Idle(), rk.Host.HasWork(), rk.Pool.NumInUse(), tier.Used(), tier.NumEvictable())
			}
			if e.Cancel(restore) {
				t.Error("a second Cancel found the request outstanding")
			}
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			s := report.Summarize(e.Records, e.Dispatched(), e.RunStats())
			if s.CompletedRequests != 2 || e.Records[3].DispatchedMs.IsSet() {
				t.Errorf("completed %d, finish dispatched %v; want 2 and never", s.CompletedRequests, e.Records[3].DispatchedMs)
			}
		})
	}
}
