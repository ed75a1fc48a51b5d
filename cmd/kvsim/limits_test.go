package main

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/traces"
)

// oversized are jobs over replay.DefaultLimits, as --set overrides of the
// §A config: the page and the worker API refuse the same ones with the same
// message (wasm/bridge_test.go, worker/api/limits_test.go).
var oversized = map[string][]string{
	"G1 of 10,000,000 blocks": {"engine.workers.aggregated.kv_cache.capacity.blocks=10000000"},
	"10^9 synthetic sessions": {
		"traffic.source={type: synthetic-session, new_input_tokens_per_turn: 500, output_tokens_per_turn: 50, session: {turns: 8}}",
		"traffic.stop={sessions: 1000000000}"},
}

// TestOversizedJobsAreRefused: predict refuses them before running, with
// core/replay's message after "kvsim: ", and exit status 1.
func TestOversizedJobsAreRefused(t *testing.T) {
	data, err := traces.Read("connectors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const path = "../../traces/connectors.yaml"
	for name, sets := range oversized {
		t.Run(name, func(t *testing.T) {
			want := replay.Check(replay.Job{Name: path, Config: data, Sets: sets})
			if want == nil {
				t.Fatal("replay.Check accepts the job")
			}
			args := []string{"predict", "--config", path}
			for _, s := range sets {
				args = append(args, "--set", s)
			}
			stdout, stderr, code := cli(t, args...)
			if code != exitError || stdout != "" || stderr != "kvsim: "+want.Error()+"\n" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1 and %q", code, stdout, stderr, "kvsim: "+want.Error())
			}
			if strings.Contains(stderr, "goroutine") {
				t.Error("a stack trace")
			}
		})
	}
}
