package replay

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/trace"
	"github.com/kvsim/kvsim/core/vtime"
	"github.com/kvsim/kvsim/traces"
)

// benchTrace is docs/model/cases.md ("Case E: the benchmark")'s trace:
// 10,000 sessions × 6 turns of the §A shape.
func benchTrace(tb testing.TB) []byte { return connectorsTrace(tb, 10000) }

// connectorsTrace is the generated trace of sessions sessions × 6 turns of
// the §A shape.
func connectorsTrace(tb testing.TB, sessions int) []byte {
	spec := trace.ConnectorsTraceDefault()
	spec.Sessions = sessions
	var b bytes.Buffer
	if err := trace.WriteConnectorsTrace(&b, spec); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// benchSets turn §A's config into §E's: concurrency 64, max_sequences 64,
// 8,192 batched tokens, 8,192 G1 blocks, no CPU tier unless extra says so.
var benchSets = []string{
	"traffic.load.concurrency=64",
	"engine.workers.aggregated.scheduler.max_sequences=64",
	"engine.workers.aggregated.scheduler.max_batched_tokens=8192",
	"engine.workers.aggregated.kv_cache.capacity.blocks=8192",
	hostOffload + "=null",
}

// benchRun is one §E replay per iteration through the door a front end
// uses (Run: config, limits, trace, engine, prediction.json).
func benchRun(b *testing.B, extra []string) { benchRunJob(b, extra, false) }

func benchRunJob(b *testing.B, extra []string, noFastForward bool) {
	data, err := traces.Read("connectors.yaml")
	if err != nil {
		b.Fatal(err)
	}
	job := Job{Name: "connectors.yaml", Dir: ".", Config: data, Sets: append(append([]string{}, benchSets...), extra...),
		Traces: Traces{Inline: benchTrace(b)}, NoFastForward: noFastForward}
	b.ReportAllocs()
	b.ResetTimer()
	var passes int64
	for i := 0; i < b.N; i++ {
		res, err := Run(job)
		if err != nil {
			b.Fatal(err)
		}
		passes = res.Stats.Passes
		if res.Summary.CompletedRequests != 60000 {
			b.Fatalf("completed %d", res.Summary.CompletedRequests)
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(60000/sec, "requests/s")
	b.ReportMetric(float64(passes)/sec, "passes/s")
}

// BenchmarkReplay is the §E benchmark without a CPU tier.
func BenchmarkReplay(b *testing.B) { benchRun(b, nil) }

// BenchmarkReplayNoFastForward is BenchmarkReplay with the engine's
// fast-forward of pure decode passes off (docs/performance.md).
func BenchmarkReplayNoFastForward(b *testing.B) { benchRunJob(b, nil, true) }

// BenchmarkReplayRecorded is BenchmarkReplay with the per-pass record on
// (issue 4: at most 1.5× slower, at most 16 bytes per block-state change).
// Like BenchmarkReplayG2 it pairs each recorded run with a plain one and
// reports the ratio, "x-no-record".
func BenchmarkReplayRecorded(b *testing.B) {
	cfg := benchConfig(b, nil)
	pairBench(b, benchCase{cfg: cfg}, benchCase{cfg: cfg, recorded: true}, "no-record")
}

// BenchmarkReplayG2 is the §E benchmark with a CPU tier (issue 3: within
// 1.3× of the no-tier run), for each profile at 2,048 and 192 host blocks,
// paired with the no-tier run (pairBench): "x-no-tier" is the figure.
func BenchmarkReplayG2(b *testing.B) {
	base := benchCase{cfg: benchConfig(b, nil)}
	for _, blocks := range []int{2048, 192} {
		for _, c := range []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"} {
			b.Run(fmt.Sprintf("%d-%s", blocks, c), func(b *testing.B) {
				tier := benchConfig(b, []string{hostOffload + "=" + fmt.Sprintf("{num_host_blocks: %d, connector: %s}", blocks, c)})
				pairBench(b, base, benchCase{cfg: tier}, "no-tier")
			})
		}
	}
}

// benchCase is one side of a paired benchmark.
type benchCase struct {
	cfg      *config.Config
	recorded bool
}

// pairBench measures other against base. The machine is shared and its
// speed drifts by ±20 % over a minute, so separate benchmarks cannot be
// compared: each iteration runs base and other back to back (alternating
// which goes first, each after a collection). It reports each side's
// ms/run, other's summed wall time as a multiple of base's ("x-"+name),
// and the same for the process CPU time ("x-"+name+"-cpu", less sensitive
// to other work on the machine). ns/op is the pair.
func pairBench(b *testing.B, base, other benchCase, name string) {
	tr := benchTrace(b)
	var tBase, tOther cost
	ratios := make([]float64, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var pb, po cost
		if i%2 == 0 {
			pb = timedRun(b, base, tr)
			po = timedRun(b, other, tr)
		} else {
			po = timedRun(b, other, tr)
			pb = timedRun(b, base, tr)
		}
		tBase.add(pb)
		tOther.add(po)
		ratios = append(ratios, po.wall.Seconds()/pb.wall.Seconds())
	}
	n := float64(b.N)
	b.ReportMetric(tBase.wall.Seconds()*1000/n, "ms-"+name)
	b.ReportMetric(tOther.wall.Seconds()*1000/n, "ms-other")
	b.ReportMetric(tOther.wall.Seconds()/tBase.wall.Seconds(), "x-"+name)
	// The median pair is what a pair looks like when neither run was
	// slowed by something else on the machine; one slowed run moves the
	// summed ratio above, not this.
	slices.Sort(ratios)
	b.ReportMetric((ratios[(len(ratios)-1)/2]+ratios[len(ratios)/2])/2, "x-"+name+"-median")
	if tBase.cpu > 0 {
		b.ReportMetric(tOther.cpu.Seconds()/tBase.cpu.Seconds(), "x-"+name+"-cpu")
	}
	if tOther.bytesPerChange > 0 {
		b.ReportMetric(tOther.bytesPerChange, "record-bytes/change")
	}
}

// cost sums the wall and process CPU time of runs.
type cost struct {
	wall, cpu      time.Duration
	bytesPerChange float64 // the last recorded run's
}

func (c *cost) add(d cost) {
	c.wall += d.wall
	c.cpu += d.cpu
	if d.bytesPerChange > 0 {
		c.bytesPerChange = d.bytesPerChange
	}
}

func benchConfig(b *testing.B, extra []string) *config.Config {
	data, _ := traces.Read("connectors.yaml")
	cfg, err := config.Parse("connectors.yaml", ".", data, append(append([]string{}, benchSets...), extra...))
	if err != nil {
		b.Fatal(err)
	}
	return cfg
}

// timedRun is one whole §E replay (trace parsing, run, prediction.json;
// the record too for a recorded case) after a collection, so that neither
// side of a pair pays for the other's garbage.
func timedRun(b *testing.B, c benchCase, tr []byte) cost {
	runtime.GC()
	start, cpu := time.Now(), processCPU()
	wl, err := Workload(c.cfg, func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tr)), nil })
	if err != nil {
		b.Fatal(err)
	}
	opts := engine.Options{}
	var rr *record.Recorder
	if c.recorded {
		rr = record.NewRecorder()
		opts.Observer = rr
	}
	res, err := RunWith(c.cfg, wl, opts)
	if err != nil {
		b.Fatal(err)
	}
	_ = res.PredictionJSON()
	d := cost{wall: time.Since(start), cpu: processCPU() - cpu}
	if rr != nil {
		d.bytesPerChange = rr.Record().Stats().BytesPerChng
	}
	if res.Summary.CompletedRequests != 60000 {
		b.Fatalf("completed %d", res.Summary.CompletedRequests)
	}
	return d
}

// BenchmarkReplayTopology is the §E benchmark on several workers (issue 6:
// within 1.5× of the single-worker cost per simulated request): 4 replicas
// × 2 attention-DP ranks, and one prefill + one decode worker.
func BenchmarkReplayTopology(b *testing.B) {
	role := "{parallelism: {replicas: 1, attention_data: 1}, scheduler: {max_batched_tokens: 8192, max_sequences: 64}, " +
		"kv_cache: {block_size: 16, bytes_per_token: 250000, capacity: {type: fixed, blocks: 8192}}, " +
		"timing: {type: fixed, prefill_ms: 2, decode_ms: 1}}"
	for _, c := range []struct {
		name string
		sets []string
	}{
		{"4x2", []string{"engine.workers.aggregated.parallelism.replicas=4", "engine.workers.aggregated.parallelism.attention_data=2"}},
		{"1P1D", []string{"engine.mode=disaggregated", "engine.workers.aggregated=null",
			"engine.workers.prefill=" + role, "engine.workers.decode=" + role,
			"engine.kv_transfer={bytes_per_token: 250000, bandwidth_gb_per_second: 100}",
			"traffic.source.format=mooncake"}},
	} {
		b.Run(c.name, func(b *testing.B) { benchRun(b, c.sets) })
	}
}

// BenchmarkSteadyState measures heap allocations in the middle of the §E
// run (between 20% and 80% of its virtual time), per pass and per session
// started there: docs/model/cases.md ("Case E: the benchmark")'s
// "allocation-free steady state" allows only per-request token lists and
// report records, which kvsim sizes per session when it starts.
func BenchmarkSteadyState(b *testing.B) {
	tr := benchTrace(b)
	data, _ := traces.Read("connectors.yaml")
	cfg, err := config.Parse("connectors.yaml", ".", data, benchSets)
	if err != nil {
		b.Fatal(err)
	}
	wl, err := Workload(cfg, func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tr)), nil })
	if err != nil {
		b.Fatal(err)
	}
	// A first run gives the run's length.
	res, err := RunWith(cfg, wl, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	end := res.Summary.DurationMs
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e, err := engine.New(cfg, wl, engine.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.RunUntil(vtime.Time(0.2 * end)); err != nil {
			b.Fatal(err)
		}
		p0, d0 := e.Passes, e.Dispatched()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		if _, err := e.RunUntil(vtime.Time(0.8 * end)); err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		passes, reqs := float64(e.Passes-p0), float64(e.Dispatched()-d0)
		mallocs := float64(m1.Mallocs - m0.Mallocs)
		b.ReportMetric(mallocs/passes, "allocs/pass")
		b.ReportMetric(mallocs/(reqs/6), "allocs/session")
		b.ReportMetric(passes, "passes")
	}
}

// BenchmarkConnectorRow is one
// docs/model/cases.md ("Case A: connector comparison") run (2,048 host
// blocks, simple_cpu_v0_32): the run the browser app makes by default, timed
// natively and under GOOS=js GOARCH=wasm to compare the two.
func BenchmarkConnectorRow(b *testing.B) {
	open := generatedOpener(b)
	data, _ := traces.Read("connectors.yaml")
	cfg, err := config.Parse("connectors.yaml", ".", data, nil)
	if err != nil {
		b.Fatal(err)
	}
	wl, err := Workload(cfg, open)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := RunWith(cfg, wl, engine.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReplayTiming is the §E benchmark with modelled pass times
// (issue 20: within 1.2× of fixed timing), paired with the fixed-timing
// run: "x-fixed" is the figure. The step models use the catalog's
// Llama-3.1-8B on an H100.
func BenchmarkReplayTiming(b *testing.B) {
	base := benchCase{cfg: benchConfig(b, nil)}
	const t = "engine.workers.aggregated.timing="
	for _, c := range []struct{ name, timing string }{
		{"polynomial", "{type: polynomial}"}, {"roofline", "{type: roofline}"}, {"trained_physics", "{type: trained_physics}"},
	} {
		b.Run(c.name, func(b *testing.B) {
			other := benchCase{cfg: benchConfig(b, []string{"engine.model=llama-3.1-8b", "engine.hardware=h100", t + c.timing})}
			pairBench(b, base, other, "fixed")
		})
	}
}

// BenchmarkReplayPolynomial is BenchmarkReplay with polynomial timing, for
// profiles (BenchmarkReplayTiming has the paired figure).
func BenchmarkReplayPolynomial(b *testing.B) {
	benchRun(b, []string{"engine.model=llama-3.1-8b", "engine.hardware=h100", "engine.workers.aggregated.timing={type: polynomial}"})
}
