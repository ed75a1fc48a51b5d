package replay

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/timing"
	"github.com/kvsim/kvsim/core/vtime"
)

// timingConfig is one idle aggregated rank of 1,000 blocks of 16 tokens
// with the given timing block.
func timingConfig(timingYAML string) string {
	return `traffic:
  source: {type: trace, format: mooncake, paths: [one.jsonl], block_size: 16}
  load: {type: trace_timestamps}
engine:
  model: llama-3.1-8b
  hardware: h200_sxm
  workers:
    aggregated:
      scheduler: {max_batched_tokens: 8192, max_sequences: 8}
      kv_cache: {block_size: 16, capacity: {blocks: 1000}}
      timing: ` + timingYAML + "\n"
}

// runOne replays one request of prompt tokens and out output tokens.
func runOne(t *testing.T, timingYAML string, prompt, out int) *Result {
	t.Helper()
	ids := make([]string, (prompt+15)/16)
	for i := range ids {
		ids[i] = strconv.Itoa(i + 1)
	}
	line := fmt.Sprintf(`{"timestamp":0,"input_length":%d,"output_length":%d,"hash_ids":[%s]}`+"\n", prompt, out, strings.Join(ids, ","))
	cfg, err := config.Parse("t.yaml", ".", []byte(timingConfig(timingYAML)), nil)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := Workload(cfg, func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(line)), nil })
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunWith(cfg, wl, engine.Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPolynomialTTFT is issue 20's check: one 1,024-token request with no
// prefix on an idle engine has TTFT 4.209989e-7·1024² + 1.518344e-2·1024 +
// 16.50142 = 32.4907119 ms, which the engine's clock holds as a whole
// number of nanoseconds, 32.490712 ms (docs/model/timing.md ("Rounding")),
// and each later token one decode time at the request's utilisation of G1.
func TestPolynomialTTFT(t *testing.T) {
	res := runOne(t, "{type: polynomial}", 1024, 3)
	r := res.Records[0]
	if got, want := float64(r.FirstTokenMs-r.ArrivalMs), 32.490712; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("TTFT %.9f ms; want %.6f", got, want)
	}
	d1 := timing.PolynomialDecodeMs(1025, 16000)
	if got := float64(r.SecondTokenMs - r.FirstTokenMs); got < d1-1e-6 || got > d1+1e-6 {
		t.Errorf("second token after %.9f ms; want %.9f", got, d1)
	}
	d2 := timing.PolynomialDecodeMs(1026, 16000)
	if got := float64(r.LastTokenMs - r.SecondTokenMs); got < d2-1e-6 || got > d2+1e-6 {
		t.Errorf("third token after %.9f ms; want %.9f", got, d2)
	}
}

// TestModelledTimingRuns: the step models time the same request from the
// catalog's Llama-3.1-8B on an H200; a longer prompt takes longer.
func TestModelledTimingRuns(t *testing.T) {
	for _, typ := range []string{"roofline", "trained_physics"} {
		short := runOne(t, "{type: "+typ+"}", 256, 2).Records[0]
		long := runOne(t, "{type: "+typ+"}", 4096, 2).Records[0]
		ts, tl := short.FirstTokenMs-short.ArrivalMs, long.FirstTokenMs-long.ArrivalMs
		if !(ts > 0 && tl > ts) {
			t.Errorf("%s: TTFT %v ms for 256 tokens, %v ms for 4,096", typ, ts, tl)
		}
		if itl := short.LastTokenMs - short.FirstTokenMs; !(itl > 0 && itl < vtime.Time(ts)) {
			t.Errorf("%s: decode step %v ms after a %v ms prefill", typ, itl, ts)
		}
	}
}

// TestPassBound: a roofline pass says what bounds it, in the record and in
// passes.jsonl (written and read back); a long prefill is compute-bound and
// a lone decode step memory-bound (the weights dominate). Fixed timing
// writes no bound.
func TestPassBound(t *testing.T) {
	bounds := func(timingYAML string) []string {
		cfg, err := config.Parse("t.yaml", ".", []byte(timingConfig(timingYAML)), nil)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, 256)
		for i := range ids {
			ids[i] = strconv.Itoa(i + 1)
		}
		line := `{"timestamp":0,"input_length":4096,"output_length":2,"hash_ids":[` + strings.Join(ids, ",") + "]}\n"
		wl, err := Workload(cfg, func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(line)), nil })
		if err != nil {
			t.Fatal(err)
		}
		rr := record.NewRecorder()
		if _, err := RunWith(cfg, wl, engine.Options{Check: true, Observer: rr}); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := rr.Record().WriteJSONL(&b); err != nil {
			t.Fatal(err)
		}
		dec, err := record.Decode(&b)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for p := 1; p <= dec.NumPasses(0); p++ {
			in, err := dec.Info(0, p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, in.Bound)
		}
		return out
	}
	if got := bounds("{type: roofline}"); len(got) != 2 || got[0] != "compute" || got[1] != "memory" {
		t.Errorf("roofline bounds %q; want [compute memory]", got)
	}
	if got := bounds("{type: fixed, prefill_ms: 2, decode_ms: 1}"); len(got) != 2 || got[0] != "" || got[1] != "" {
		t.Errorf("fixed bounds %q; want none", got)
	}
}

// timedDigestsGolden pins the reports of the modelled-timing worlds; it is
// written natively with -update and checked natively and under GOOS=js
// GOARCH=wasm (the determinism rule for the timing models' arithmetic).
var timedDigestsGolden = filepath.Join("testdata", "timed-world-digests.golden")

// TestRandomWorldsModelledTiming runs the first 150 random worlds of
// TestRandomWorldsRunClean with every role's timing replaced by a modelled
// one (polynomial, roofline, trained_physics in turn; Llama-3.1-8B on an
// H100), with the invariant checker on: none may panic, trip an invariant
// or leave requests unaccounted for, and two runs give the same bytes. The
// SHA-256 of the reports of the first 60 are pinned in
// testdata/timed-world-digests.golden.
func TestRandomWorldsModelledTiming(t *testing.T) {
	types := []string{"polynomial", "roofline", "trained_physics"}
	n := uint64(150)
	if runtime.GOARCH == "wasm" {
		n = 60
	}
	ran := 0
	var digests strings.Builder
	for seed := uint64(1); seed <= n; seed++ {
		kind, yaml, rows := randomWorldOf(seed)
		base, err := config.Parse("world.yaml", ".", []byte(yaml), nil)
		if err != nil {
			continue
		}
		typ := types[seed%3]
		sets := []string{"engine.model=llama-3.1-8b", "engine.hardware=h100"}
		for _, r := range base.Roles() {
			sets = append(sets, "engine.workers."+r.Name+".timing={type: "+typ+"}")
		}
		cfg, err := config.Parse("world.yaml", ".", []byte(yaml), sets)
		if err != nil {
			t.Errorf("world %d with %s timing: %v", seed, typ, err)
			continue
		}
		ran++
		t.Run(fmt.Sprintf("%d-%s-%s", seed, kind, typ), func(t *testing.T) {
			first := runClean(t, cfg, rows)
			second := runClean(t, cfg, rows)
			for k, name := range []string{"prediction.json", "requests.jsonl", "passes.jsonl"} {
				if !bytes.Equal(first[k], second[k]) {
					t.Errorf("%s differs between two runs\n%s", name, yaml)
				}
			}
			if seed <= 60 {
				fmt.Fprintf(&digests, "%d %s %s", seed, kind, typ)
				for _, o := range first {
					fmt.Fprintf(&digests, " %x", sha256.Sum256(o))
				}
				digests.WriteByte('\n')
			}
		})
	}
	if ran < int(n)*2/3 {
		t.Errorf("only %d worlds ran", ran)
	}
	got := digests.String()
	if *update {
		if runtime.GOOS == "js" {
			t.Fatal("-update must run natively")
		}
		if err := os.WriteFile(timedDigestsGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(timedDigestsGolden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("modelled-timing world digests differ from %s:\n%s", timedDigestsGolden, got)
	}
}

// TestPrefillTimeByBound is requests.jsonl's prefill_* fields on a hand-
// checked case (docs/model/timing.md ("Per request")): on roofline,
// Llama-3.1-8B on an H200, A (4,096 prompt tokens at 0 ms) is prefilled
// alone in pass 1, compute-bound; B (64 tokens, arriving at 1 ms, during
// A's prefill) is prefilled in pass 2 beside A's first decode step, a
// memory-bound pass (the weights dominate 65 tokens). Each request's
// figure is its pass's end_ms − compute_start_ms in passes.jsonl, under
// its bound, and the other bound is 0. Fixed and polynomial timing write
// no prefill_* field.
func TestPrefillTimeByBound(t *testing.T) {
	trace := `{"timestamp":0,"input_length":4096,"output_length":3,"hash_ids":[` + hashIDs(1, 256) + "]}\n" +
		`{"timestamp":1,"input_length":64,"output_length":2,"hash_ids":[` + hashIDs(1001, 4) + "]}\n"
	run := func(timingYAML string) (*Result, *record.Record) {
		cfg, err := config.Parse("t.yaml", ".", []byte(timingConfig(timingYAML)), nil)
		if err != nil {
			t.Fatal(err)
		}
		wl, err := Workload(cfg, func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(trace)), nil })
		if err != nil {
			t.Fatal(err)
		}
		rr := record.NewRecorder()
		res, err := RunWith(cfg, wl, engine.Options{Check: true, Observer: rr})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := rr.Record().WriteJSONL(&b); err != nil {
			t.Fatal(err)
		}
		dec, err := record.Decode(&b)
		if err != nil {
			t.Fatal(err)
		}
		return res, dec
	}
	res, dec := run("{type: roofline}")
	pass := func(p int) (vtime.Time, string) {
		in, err := dec.Info(0, p)
		if err != nil {
			t.Fatal(err)
		}
		return in.EndMs - in.ComputeStartMs, in.Bound
	}
	d1, b1 := pass(1)
	d2, b2 := pass(2)
	if b1 != "compute" || b2 != "memory" {
		t.Fatalf("passes 1 and 2 bound by %q and %q; want compute and memory", b1, b2)
	}
	a, b := res.Records[0].Prefill, res.Records[1].Prefill
	if a == nil || b == nil {
		t.Fatal("roofline records carry no prefill time")
	}
	if a.Passes != 1 || a.ComputeBoundMs != d1 || a.MemoryBoundMs != 0 {
		t.Errorf("A: %+v; want 1 pass, %v ms compute-bound", *a, d1)
	}
	if b.Passes != 1 || b.ComputeBoundMs != 0 || b.MemoryBoundMs != d2 {
		t.Errorf("B: %+v; want 1 pass, %v ms memory-bound", *b, d2)
	}
	t.Logf("A: pass 1 %.6f ms compute-bound; B: pass 2 %.6f ms memory-bound", float64(d1), float64(d2))
	want := fmt.Sprintf(`"prefill_passes": 1, "prefill_compute_bound_ms": %s, "prefill_memory_bound_ms": 0,`,
		strconv.FormatFloat(float64(d1), 'f', -1, 64))
	if !strings.Contains(string(res.RequestsJSONL()), want) {
		t.Errorf("requests.jsonl lacks %s:\n%s", want, res.RequestsJSONL())
	}
	for _, typ := range []string{"{type: fixed, prefill_ms: 2, decode_ms: 1}", "{type: polynomial}"} {
		res, _ := run(typ)
		if bytes.Contains(res.RequestsJSONL(), []byte("prefill_")) || res.Records[0].Prefill != nil {
			t.Errorf("%s writes a prefill time:\n%s", typ, res.RequestsJSONL())
		}
	}
}

// hashIDs lists n block hashes from first, comma-separated.
func hashIDs(first, n int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(first + i)
	}
	return strings.Join(ids, ",")
}
