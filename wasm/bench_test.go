package main

import (
	"testing"

	"github.com/kvsim/kvsim/wasm/proto"
)

// BenchmarkBridgeA runs acceptance.md §A (2,048 host blocks, SimpleCPU)
// through the bridge, reports included. Run it natively and under node
// (GOOS=js GOARCH=wasm) to compare: docs/ui.md records the ratio.
func BenchmarkBridgeA(b *testing.B) {
	data := string(mustRead(&testing.T{}, "connectors.yaml"))
	j := &job{Op: proto.OpRun, Config: data, Name: "connectors.yaml", Requests: true,
		Variants: []proto.Variant{{Label: "x", Sets: goldenCases[0].sets}}}
	for b.Loop() {
		if outs := j.run(nil); outs[0].Err != nil {
			b.Fatal(outs[0].Err)
		}
	}
}

// BenchmarkBridgeSessions is a larger synthetic-session workload (512
// sessions × 6 turns, 3,072 requests) with a 192-block G2.
func BenchmarkBridgeSessions(b *testing.B) {
	data := string(mustRead(&testing.T{}, "connectors.yaml"))
	j := &job{Op: proto.OpRun, Config: data, Name: "connectors.yaml",
		Overrides: []string{"traffic={source: {type: synthetic-session, new_input_tokens_per_turn: 256, output_tokens_per_turn: 64, session: {turns: 6, inter_turn_delay_ms: 200}}, load: {type: concurrency, concurrency: 4}, stop: {sessions: 512}}",
			hostOffload + ".num_host_blocks=192"}}
	for b.Loop() {
		if outs := j.run(nil); outs[0].Err != nil {
			b.Fatal(outs[0].Err)
		}
	}
}
