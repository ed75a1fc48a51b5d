package replay

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
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
