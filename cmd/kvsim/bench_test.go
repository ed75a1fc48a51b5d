package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/traces"
)

// TestBenchConfigIsConnectorsWithBenchSets keeps bench.yaml in step with
// traces/connectors.yaml: both must decode to the same config once §E's (docs/model/cases.md)
// settings (core/replay/bench_test.go's benchSets) are applied to the
// latter.
func TestBenchConfigIsConnectorsWithBenchSets(t *testing.T) {
	benchSets := []string{
		"traffic.source.paths=[" + benchTraceFile + "]",
		"traffic.load.concurrency=64",
		"engine.workers.aggregated.scheduler.max_sequences=64",
		"engine.workers.aggregated.scheduler.max_batched_tokens=8192",
		"engine.workers.aggregated.kv_cache.capacity.blocks=8192",
		hostOffloadPath + "=null",
	}
	connectors, err := traces.Read("connectors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		blocks    int
		connector string
		sets      []string
	}{
		{0, "", nil},
		{2048, "", []string{hostOffloadPath + ".num_host_blocks=2048"}},
		{192, "offloading_v0_32", connectorSets(192, "offloading_v0_32")},
	} {
		want, err := config.Parse("c", ".", connectors, append(append([]string{}, benchSets...), tc.sets...))
		if err != nil {
			t.Fatal(err)
		}
		got, err := config.Parse("c", ".", []byte(benchConfig(tc.blocks, tc.connector)), nil)
		if err != nil {
			t.Fatalf("bench.yaml (%d, %q): %v", tc.blocks, tc.connector, err)
		}
		// Traffic and Engine are what the config says (where each key was
		// written differs, and is kept beside them for error positions).
		if !reflect.DeepEqual(got.Traffic, want.Traffic) || !reflect.DeepEqual(got.Engine, want.Engine) {
			t.Errorf("bench.yaml (%d, %q) decodes to\n%+v\n%+v\nwant\n%+v\n%+v", tc.blocks, tc.connector,
				got.Traffic, got.Engine, want.Traffic, want.Engine)
		}
	}
}

// TestBench runs the benchmark on a small trace: the child processes are
// this test binary acting as kvsim (TestMain).
func TestBench(t *testing.T) {
	t.Setenv(cliEnv, "1")
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr string
	}{
		{"small", []string{"bench", "--runs", "2", "--sessions", "20"}, exitOK,
			[]string{"20 sessions × 6 turns = 120 requests, no host offload", "median of 2 runs", "simulated requests/s",
				"passes/s", "ns per simulated request", "heap allocations"}, "kvsim bench: run 2/2: "},
		{"host offload", []string{"bench", "--runs", "1", "--sessions", "10", "--host-offload", "64", "--connector", "simple_cpu_v0_32"}, exitOK,
			[]string{"host offload 64 blocks, simple_cpu_v0_32", "no tier s", "median wall time s, no host offload",
				"× no host offload (medians)", "× no host offload (sums)"}, "run 1/1 without host offload: "},
		{"connector without tier", []string{"bench", "--connector", "offloading_v0_32"}, exitUsage, nil, "--connector needs --host-offload BLOCKS"},
		{"unknown connector", []string{"bench", "--host-offload", "8", "--connector", "lmcache"}, exitUsage, nil,
			`unknown profile "lmcache" (accepted: offloading_v0_24, offloading_v0_32, simple_cpu_v0_32)`},
		{"no runs", []string{"bench", "--runs", "0"}, exitUsage, nil, "--runs must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := cli(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("exit %d, stderr %q; want exit %d, stderr ∋ %q", code, stderr, tc.code, tc.stderr)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
}
