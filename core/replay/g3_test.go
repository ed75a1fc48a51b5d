package replay

import (
	"bytes"
	"io"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
)

// g3Config is the §B (docs/model/cases.md) setup on two workers with a G3 tier behind G2.
const g3Config = `
traffic:
  source: {type: trace, format: mooncake, paths: [t.jsonl], block_size: 4}
  load: {type: trace_timestamps}
engine:
  mode: aggregated
  model: tiny
  hardware: h200_sxm
  backend: vllm
  workers:
    aggregated:
      parallelism: {replicas: 2}
      scheduler: {max_batched_tokens: 16, max_sequences: 1}
      kv_cache:
        block_size: 4
        bytes_per_token: 250000
        capacity: {type: fixed, blocks: 3}
        host_offload: {num_host_blocks: 2, d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 1}
        g3_offload: {scope: SCOPE, num_g3_blocks: 16, read_bandwidth_gbps: 1, write_bandwidth_gbps: 1}
      timing: {type: fixed, prefill_ms: 2, decode_ms: 1}
`

func runInline(t *testing.T, cfgText, trace string, sets []string) *Result {
	t.Helper()
	cfg, err := config.Parse("inline.yaml", ".", []byte(cfgText), sets)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := Workload(cfg, func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader([]byte(trace))), nil })
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunWith(cfg, wl, engine.Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestG3CrossWorkerRestore is issue 6's G3 check: the seed prefix is written
// to G3 by worker 0; the restore lands on worker 1 (round robin), whose G2
// never held it. With a cluster_shared G3 worker 1 reads it (G3 → G2 → G1);
// with worker_local G3 it cannot and recomputes.
func TestG3CrossWorkerRestore(t *testing.T) {
	trace := `{"request_id":"seed","timestamp":0,"input_length":9,"output_length":1,"hash_ids":[1,2,3]}
{"request_id":"restore","timestamp":100,"input_length":9,"output_length":1,"hash_ids":[1,2,3]}
`
	for _, c := range []struct {
		scope       string
		cross, host int64
	}{{"cluster_shared", 2, 8}, {"worker_local", 0, 0}} {
		t.Run(c.scope, func(t *testing.T) {
			res := runInline(t, replaceScope(g3Config, c.scope), trace, nil)
			g := res.Summary.G3
			if g == nil {
				t.Fatal("no g3_offload section")
			}
			if g.CrossWorkerReadBlocks != c.cross {
				t.Errorf("cross_worker_read_blocks %d; want %d", g.CrossWorkerReadBlocks, c.cross)
			}
			if got := res.Records[1].FirstHost; int64(got) != c.host {
				t.Errorf("restore took %d tokens from G2; want %d", got, c.host)
			}
			if res.Records[1].PrefillWorker != 1 {
				t.Errorf("restore ran on worker %d; want 1", res.Records[1].PrefillWorker)
			}
			if !bytes.Contains(res.PredictionJSON(), []byte(`"g3_offload": {"lookup_probes"`)) {
				t.Errorf("prediction.json lacks g3_offload")
			}
		})
	}
}

// TestG3RestoresWhatG2Lost: one worker whose 2-block G2 cannot keep the seed
// prefix once "pressure" is stored; G3 still holds it, so the restore reads
// it back through G2.
func TestG3RestoresWhatG2Lost(t *testing.T) {
	res := runInline(t, replaceScope(g3Config, "worker_local"), readCase("g2-restore.jsonl"),
		[]string{"engine.workers.aggregated.parallelism.replicas=1"})
	var restore int
	for _, r := range res.Records {
		if r.RequestID == "restore" {
			restore = r.FirstHost
		}
	}
	if restore != 8 {
		t.Errorf("restore took %d tokens from G2 (via G3); want 8", restore)
	}
	if g := res.Summary.G3; g.Read.CompletedJobs == 0 || g.CrossWorkerReadBlocks != 0 {
		t.Errorf("G3 reads %+v", g)
	}
}

func replaceScope(s, scope string) string {
	return string(bytes.ReplaceAll([]byte(s), []byte("SCOPE"), []byte(scope)))
}

func readCase(name string) string {
	data, _ := testTraces.ReadFile(name)
	return string(data)
}
