// Package replaytest holds what the front ends' tests share about the
// door: jobs every front end must refuse the same way.
package replaytest

// Oversized are jobs over replay.DefaultLimits, written as --set
// overrides of the built-in traces/connectors.yaml. The CLI, the page's
// Web Worker and the worker API must each refuse them before running, with
// core/replay's message.
var Oversized = map[string][]string{
	"G1 of 10,000,000 blocks": {"engine.workers.aggregated.kv_cache.capacity.blocks=10000000"},
	"10^9 synthetic sessions": {
		"traffic.source={type: synthetic-session, new_input_tokens_per_turn: 500, output_tokens_per_turn: 50, session: {turns: 8}}",
		"traffic.stop={sessions: 1000000000}"},
}
