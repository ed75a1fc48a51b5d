package shard

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/sweep"
)

// mooncakeVar names the Mooncake case's conversation.yaml, beside the full
// conversation trace (as for core/sweep's TestRoutingMooncake). The tests
// that read it are checks by hand: minutes of CPU, skipped when it is
// unset (as in CI).
const mooncakeVar = "KVSIM_MOONCAKE"

func mooncake(t *testing.T, vary ...string) (*sweep.Plan, replay.Traces) {
	return mooncakeSet(t, nil, vary...)
}

func mooncakeSet(t *testing.T, sets []string, vary ...string) (*sweep.Plan, replay.Traces) {
	t.Helper()
	path := os.Getenv(mooncakeVar)
	if path == "" {
		t.Skipf("set %s to the Mooncake case's conversation.yaml", mooncakeVar)
	}
	dir := filepath.Dir(path)
	cfg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return mustPlan(t, sweep.Spec{Name: "conversation.yaml", Dir: dir, Data: cfg, Sets: sets, Vary: vary}),
		replay.Traces{Files: func(p string) (io.ReadCloser, error) { return os.Open(filepath.Join(dir, p)) }}
}

// TestMooncakeShards: 3 shards of a sweep over the full conversation trace
// (12,031 requests) merged are byte-identical to the unsharded sweep.
func TestMooncakeShards(t *testing.T) {
	p, tr := mooncake(t, "host_offload={num_host_blocks: 25000, connector: offloading_v0_24},{num_host_blocks: 200000, connector: simple_cpu_v0_32}",
		"parallelism.replicas=2,4")
	want, err := p.Run(tr, sweep.Options{Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Merge(shards(t, p, tr, 3))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.CSV(), want.CSV()) || !bytes.Equal(got.JSON(), want.JSON()) {
		t.Error("3 shards merged differ from the unsharded sweep")
	}
}

// TestMooncakeCost logs each point's estimated cost and the CPU time it
// took (one point at a time, so the process's CPU time is the point's):
// the figures of docs/sweep.md ("Cost of a point").
func TestMooncakeCost(t *testing.T) {
	var vary []string // KVSIM_MOONCAKE_VARY: --vary arguments separated by ";"
	if v := os.Getenv("KVSIM_MOONCAKE_VARY"); v != "" {
		vary = strings.Split(v, ";")
	}
	if len(vary) == 0 {
		vary = []string{"host_offload.num_host_blocks=25000,200000", "connector=offloading_v0_24,simple_cpu_v0_32",
			"parallelism.replicas=1,2,4"}
	}
	p, tr := mooncakeSet(t, []string{"engine.workers.aggregated.kv_cache.host_offload={num_host_blocks: 25000, connector: offloading_v0_24}"}, vary...)
	wls := replay.NewWorkloads()
	costs, _ := Costs(p, tr, wls)
	for i := range p.Len() {
		start := processCPU()
		out := p.RunPoints([]int{i}, tr, sweep.Options{Parallel: 1, Workloads: wls})
		cpu := processCPU() - start
		t.Logf("%s: cost %d, %.2f CPU-s, %.1f units per CPU-µs, err %v", p.Label(i), costs[i], cpu.Seconds(),
			float64(costs[i])/float64(cpu.Microseconds()), out[0].Err)
	}
}
