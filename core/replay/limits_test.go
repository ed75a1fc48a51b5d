package replay

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/traces"
)

// liveHeap is the heap left after two collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// syntheticConfig is a two-replica synthetic workload of 4,000-token
// prompts.
const syntheticConfig = `traffic:
  source: {type: synthetic, input_tokens: 4000, output_tokens: 200}
  load: {type: concurrency, concurrency: 32}
  stop: {requests: 1000}
engine:
  mode: aggregated
  model: m
  hardware: h200_sxm
  context_length: 131072
  workers:
    aggregated:
      parallelism: {replicas: 2, tensor: 1, attention_data: 1}
      scheduler: {max_batched_tokens: 8192, max_sequences: 64}
      kv_cache: {block_size: 16, prefix_caching: true, capacity: {type: fixed, blocks: 100000}}
      timing: {type: fixed, prefill_ms: 10, decode_ms: 5}
`

// TestMemoryEstimate runs workloads of each shape and compares
// Size.MemoryBytes with the peak live heap the run reached (sampled, after
// a collection, from the progress callback): the estimate must not be
// below the measure, nor more than twice it. TestMemoryEstimateMooncake
// does the same on the Mooncake conversation trace (not in the
// repository): 201 MiB estimated for 123 MiB measured, 256 for 179 with a
// 200,000-block SimpleCPU tier on each of the 4 ranks (docs/performance.md).
func TestMemoryEstimate(t *testing.T) {
	conn, err := traces.Read("connectors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tr := connectorsTrace(t, 2000)
	delta := Job{Name: "c", Config: conn, Sets: benchSets, Traces: Traces{Inline: tr}}
	withG2 := delta
	withG2.Sets = append(append([]string{}, benchSets...), hostOffload+"={num_host_blocks: 50000, connector: simple_cpu_v0_32}")
	synth := Job{Name: "s", Config: []byte(syntheticConfig)}
	sessions := synth
	sessions.Sets = []string{"traffic.source={type: synthetic-session, new_input_tokens_per_turn: 500, output_tokens_per_turn: 50, session: {turns: 8}}",
		"traffic.stop={sessions: 400}"}
	for _, c := range []struct {
		name string
		job  Job
	}{{"mooncake-delta", delta}, {"mooncake-delta with G2", withG2}, {"synthetic", synth}, {"synthetic-session", sessions}} {
		t.Run(c.name, func(t *testing.T) { checkEstimate(t, c.job, 16) })
	}
}

// checkEstimate runs job, sampling the live heap every every-th progress
// call, and wants the estimate between 1 and 2 times the peak.
func checkEstimate(t *testing.T, job Job, every int) {
	t.Helper()
	base := liveHeap()
	var peak uint64
	calls := 0
	job.Progress = func(done, total int) {
		if calls++; calls%every == 1 || done == total {
			peak = max(peak, liveHeap())
		}
	}
	out, err := Run(job)
	if err != nil {
		t.Fatal(err)
	}
	live := float64(peak - min(base, peak))
	est := out.Size.MemoryBytes()
	t.Logf("estimate %.1f MiB, peak live heap %.1f MiB, ratio %.2f (%+v)", est/(1<<20), live/(1<<20), est/live, out.Size)
	if r := est / live; r < 1 || r > 2 {
		t.Errorf("estimate %.1f MiB for a peak live heap of %.1f MiB (ratio %.2f; want 1 to 2)", est/(1<<20), live/(1<<20), r)
	}
}

// TestMemoryEstimateMooncake is TestMemoryEstimate on the Mooncake
// conversation trace (KVSIM_MOONCAKE, as for TestFastForwardMooncake;
// skipped when unset), without G2 and with a 200,000-block SimpleCPU tier
// per rank.
func TestMemoryEstimateMooncake(t *testing.T) {
	path, _, data, open := mooncakeCase(t)
	job := Job{Name: filepath.Base(path), Config: data, Traces: Traces{Files: open}}
	g2 := job
	g2.Sets = []string{hostOffload + "={num_host_blocks: 200000, connector: simple_cpu_v0_32}"}
	t.Run("no G2", func(t *testing.T) { checkEstimate(t, job, 256) })
	t.Run("SimpleCPU 200,000", func(t *testing.T) { checkEstimate(t, g2, 256) })
}

// TestLimitsRefuseTheSameJobEverywhere: a job over DefaultLimits is
// refused with DefaultLimits' message whatever tighter limits the front end
// adds, and before anything is built.
func TestLimitsRefuseTheSameJobEverywhere(t *testing.T) {
	conn, err := traces.Read("connectors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tight := Limits{MaxRanks: 4, MaxG1Blocks: 1000, MaxG2Blocks: 1000, MaxRequests: 10, MaxMemoryBytes: 1 << 20}
	for _, c := range []struct {
		name string
		job  Job
		want string
	}{
		{"G1 of 10,000,000 blocks", Job{Name: "c.yaml", Config: conn, Sets: []string{"engine.workers.aggregated.kv_cache.capacity.blocks=10000000"}, Traces: Traces{Builtin: true}},
			"--set engine.workers.aggregated.kv_cache.capacity.blocks=10000000: engine.workers.aggregated.kv_cache.capacity.blocks: 10,000,000 G1 blocks per DP rank exceed the limit of 4,194,304"},
		{"G2 of 99,999,999,999 blocks", Job{Name: "c.yaml", Config: conn, Sets: []string{hostOffload + ".num_host_blocks=99999999999"}, Traces: Traces{Builtin: true}},
			"--set " + hostOffload + ".num_host_blocks=99999999999: " + hostOffload + ".num_host_blocks: 99,999,999,999 host blocks exceed the limit of 16,777,216 per G2 tier"},
		{"10^9 synthetic sessions", Job{Name: "s.yaml", Config: []byte(syntheticConfig), Sets: []string{
			"traffic.source={type: synthetic-session, new_input_tokens_per_turn: 500, output_tokens_per_turn: 50, session: {turns: 8}}",
			"traffic.stop={sessions: 1000000000}"}},
			"--set traffic.stop={sessions: 1000000000}: traffic.stop.sessions: the run would need about 16.9 TiB of memory (8,000,000,000 requests, 4,400,000,000,000 tokens, 200,000 G1 and 0 G2 blocks), more than the limit of 1.5 GiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, lim := range []Limits{{}, tight} {
				j := c.job
				j.Limits = lim
				_, err := Run(j)
				var e *Error
				if !errors.As(err, &e) || e.Kind != KindLimit || e.Error() != c.want {
					t.Errorf("limits %+v: got %v; want %s", lim, err, c.want)
				}
				if cerr := Check(j); cerr == nil || cerr.Error() != c.want {
					t.Errorf("Check: got %v; want the same error", cerr)
				}
			}
		})
	}
}

// TestCaptureLimits: a per-pass record over the bound refuses the job, or
// is skipped with a note when the job says so; requests.jsonl likewise
// refuses.
func TestCaptureLimits(t *testing.T) {
	conn, err := traces.Read("connectors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	job := Job{Name: "c.yaml", Config: conn, Traces: Traces{Builtin: true}, Limits: Limits{MaxRecordRequests: 47, MaxRequestRows: 48}}
	job.Capture = Capture{Passes: true}
	if _, err := Run(job); err == nil || !strings.Contains(err.Error(), "the per-pass record is kept for runs of at most 47 requests; this one has 48") {
		t.Errorf("record over the bound: %v", err)
	}
	job.Capture.SkipLargeRecord = true
	out, err := Run(job)
	if err != nil || out.Record != nil || !strings.Contains(out.RecordNote, "at most 47") {
		t.Errorf("skipped record: %v, record %v, note %q", err, out != nil && out.Record != nil, out.RecordNote)
	}
	job.Capture = Capture{Requests: true}
	job.Limits.MaxRequestRows = 47
	if _, err := Run(job); err == nil || !strings.Contains(err.Error(), "at most 47 requests; this one has 48") {
		t.Errorf("requests over the bound: %v", err)
	}
}

// TestRecordBytesLimit: a whole per-pass record estimated over
// Limits.MaxRecordBytes is refused with the estimate (§A's (docs/model/cases.md) default row:
// 1,961 passes of 256 + 16 × (128 + 2,048) bytes), so is a window whose
// lines are, a window of no pass is refused, and a record or window under
// the bound is kept.
func TestRecordBytesLimit(t *testing.T) {
	conn, err := traces.Read("connectors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	job := Job{Name: "c.yaml", Config: conn, Traces: Traces{Builtin: true}, Limits: Limits{MaxRecordBytes: 1 << 20}}
	job.Capture = Capture{Passes: true}
	want := "the per-pass record of this run would be about 65.6 MiB (1,961 passes, about 34.2 KiB a line), more than the limit of 1.0 MiB"
	if _, err := Run(job); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("record over the bound: %v; want %q", err, want)
	}
	// A window of 20 passes: 20 lines of the estimated 34.2 KiB.
	job.Capture.Window, _ = record.ParseWindow("100:119")
	out, err := Run(job)
	if err != nil || out.Record == nil || out.Record.FirstPass(0) != 100 || out.Record.NumLines(0) != 119 {
		t.Errorf("windowed record: %v", err)
	}
	job.Capture.Window, _ = record.ParseWindow("100:159")
	want = "the window 100:159 of the per-pass record (60 pass lines) would be about 2.0 MiB (about 34.2 KiB a line), more than the limit of 1.0 MiB; take a smaller window"
	if _, err := Run(job); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("window over the bound: %v; want %q", err, want)
	}
	job.Capture.Window, _ = record.ParseWindow("5000:")
	want = "the capture window 5000: holds no pass of the run (1,961 group passes, the last ending at"
	if _, err := Run(job); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("empty window: %v; want %q", err, want)
	}
	job.Capture.Window = record.Window{}
	job.Limits.MaxRecordBytes = RecordBytesLimit
	if out, err := Run(job); err != nil || out.Record == nil {
		t.Errorf("record under the bound: %v", err)
	}
}
