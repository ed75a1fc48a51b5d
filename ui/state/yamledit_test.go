package state

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/traces"
)

const agg = "engine.workers.aggregated"

// blockStyle is connectors.yaml written with block mappings, comments and
// quoted scalars, to exercise the block paths of the editor.
const blockStyle = `# a block-style config
traffic:
  source:
    type: trace   # the §A trace
    format: "mooncake-delta"
    paths:
      - delta-sessions.jsonl
    block_size: 16
  load:
    type: concurrency
    concurrency: 4

engine:
  mode: aggregated
  model: 'tiny'
  hardware: h200_sxm
  workers:
    aggregated:
      parallelism:
        replicas: 1
      scheduler:
        max_batched_tokens: 2048
        max_sequences: 2
      kv_cache:
        block_size: 16
        bytes_per_token: 250000
        capacity:
          type: fixed
          bytes: 512000000
        host_offload:
          num_host_blocks: 2048 # the big tier
          connector: simple_cpu_v0_32
      timing:
        type: fixed
        prefill_ms: 2
        decode_ms: 1
`

func texts(t *testing.T) map[string]string {
	out := map[string]string{"block": blockStyle}
	for _, n := range []string{"connectors.yaml", "g2-restore.yaml"} {
		b, err := traces.Read(n)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = string(b)
	}
	out["no-trailing-newline"] = strings.TrimRight(out["connectors.yaml"], "\n")
	return out
}

// edits are path=value pairs the form and the compare mode produce, plus
// some awkward ones.
var edits = []string{
	agg + ".kv_cache.host_offload.connector=offloading_v0_32",
	agg + ".kv_cache.host_offload.num_host_blocks=192",
	agg + ".kv_cache.host_offload=null",
	agg + ".kv_cache.host_offload={num_host_blocks: 64, connector: simple_cpu_v0_32}",
	agg + ".kv_cache.host_offload.d2h_bandwidth_gbps=12.5",
	agg + ".kv_cache.host_offload.h2d_bandwidth_gbps=0",
	agg + ".kv_cache.host_offload.latency_to_first_byte_ms=0.5",
	agg + ".kv_cache.capacity.blocks=256",
	agg + ".kv_cache.capacity.bytes=null",
	agg + ".kv_cache.capacity={type: fixed, blocks: 99}",
	agg + ".kv_cache.block_size=32",
	agg + ".kv_cache.block_size=0",
	agg + ".parallelism.replicas=2",
	agg + ".parallelism.attention_data=2",
	agg + ".parallelism.tensor=4",
	agg + ".scheduler.max_sequences=8",
	agg + ".scheduler.max_batched_tokens=4096",
	agg + ".timing.prefill_ms=2.25",
	agg + ".timing.decode_ms=1",
	agg + ".timing={type: fixed, prefill_ms: 3, decode_ms: 2}",
	agg + ".startup_seconds=1",
	"traffic.load.concurrency=2",
	"traffic.load={type: trace_timestamps}",
	"traffic.source.paths=[delta-sessions.jsonl]",
	"traffic={source: {type: synthetic-session, new_input_tokens_per_turn: 64, output_tokens_per_turn: 8, session: {turns: 3}}, load: {type: concurrency, concurrency: 2}, stop: {sessions: 4}}",
	"engine.context_length=max",
	"engine.mode=disaggregated",
	"engine.backend_version=\"0.24\"",
	"engine.model=other-model",
	"engine.nothing=1",
}

func parse(t *testing.T, text string, sets []string) (*config.Config, error) {
	t.Helper()
	cfg, err := config.Parse("c.yaml", "", []byte(text), sets)
	if cfg != nil {
		cfg.Name = ""
	}
	return cfg, err
}

// TestSetYAMLAgreesWithSet checks the property the YAML view rests on: a
// text edit with SetYAML parses to the very config the CLI builds with
// --set on the original text (or both are rejected).
func TestSetYAMLAgreesWithSet(t *testing.T) {
	valid := 0
	defer func() {
		if valid < 60 {
			t.Errorf("only %d edits gave valid configs; the test proves little", valid)
		}
	}()
	for name, text := range texts(t) {
		for _, e := range edits {
			path, value, _ := strings.Cut(e, "=")
			want, wantErr := parse(t, text, []string{e})
			edited, err := SetYAML(text, path, value)
			if err != nil {
				t.Errorf("%s: SetYAML(%s): %v", name, e, err)
				continue
			}
			got, gotErr := parse(t, edited, nil)
			if (wantErr == nil) != (gotErr == nil) {
				t.Errorf("%s: %s: --set error %v, edited text error %v\n%s", name, e, wantErr, gotErr, edited)
				continue
			}
			if wantErr == nil {
				valid++
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %s: configs differ\n%s", name, e, edited)
				}
			}
		}
	}
}

// TestSetYAMLSequences applies several edits in turn.
func TestSetYAMLSequences(t *testing.T) {
	for name, text := range texts(t) {
		for start := 0; start < len(edits); start += 3 {
			var sets []string
			edited := text
			for i := start; i < len(edits) && i < start+6; i++ {
				e := edits[i]
				path, value, _ := strings.Cut(e, "=")
				next, err := SetYAML(edited, path, value)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				edited = next
				sets = append(sets, e)
			}
			want, wantErr := parse(t, text, sets)
			got, gotErr := parse(t, edited, nil)
			if (wantErr == nil) != (gotErr == nil) || (wantErr == nil && !reflect.DeepEqual(got, want)) {
				t.Errorf("%s: %v: --set %v / %v, edited %v\n%s", name, sets, wantErr, gotErr, edited, edited)
			}
		}
	}
}

func TestSetYAMLKeepsComments(t *testing.T) {
	out, err := SetYAML(blockStyle, agg+".kv_cache.host_offload.num_host_blocks", "192")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "num_host_blocks: 192 # the big tier") || !strings.Contains(out, "# the §A trace") {
		t.Errorf("comments lost:\n%s", out)
	}
	if strings.Count(out, "\n") != strings.Count(blockStyle, "\n") {
		t.Errorf("line count changed")
	}
}

func TestSetYAMLRefusals(t *testing.T) {
	anchored := "base: &b {block_size: 16}\n" + strings.Replace(blockStyle, "block_size: 16\n        bytes", "<<: *b\n        bytes", 1)
	for _, c := range []struct{ text, path, value string }{
		{"a: [1, 2]\n", "a.b", "1"},
		{"a: 1\n", "a.b", "1"},
		{"a: &x {b: 1}\n", "a.b", "2"},
		{"a: {b: 1\n", "a.b", "2"},
		{"a: 1\n", "a..b", "2"},
		{"a: 1\n", "a", ""},
		{anchored, agg + ".kv_cache.host_offload.x", "1"},
		{"m:\n  <<: {c: {d: 1}}\n  e: 2\n", "m.c.d", "3"},
	} {
		if _, err := SetYAML(c.text, c.path, c.value); err == nil && !strings.Contains(c.text, "<<") {
			t.Errorf("SetYAML(%q, %s=%s) succeeded", c.text, c.path, c.value)
		}
	}
}

func TestSetYAMLEmptyDocument(t *testing.T) {
	out, err := SetYAML("# nothing\n", "traffic.load.concurrency", "3")
	if err != nil || !strings.Contains(out, "traffic: {load: {concurrency: 3}}") {
		t.Fatalf("%q %v", out, err)
	}
}
