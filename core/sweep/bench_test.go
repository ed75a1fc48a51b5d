package sweep

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

// benchVary is issue 8's benchmark grid: 12 G2 sizes × 3 connectors of §A (docs/model/cases.md).
var benchVary = []string{
	"host_offload.num_host_blocks=64,128,192,256,320,384,512,768,1024,1536,2048,4096",
	"connector=offloading_v0_24,offloading_v0_32,simple_cpu_v0_32",
}

// BenchmarkSweep times the whole 36-point sweep on all cores against its
// target: 2 × the slowest single point × 36 / cores. Each iteration runs
// the sweep (timed), then every point alone (untimed, Evaluate builds its
// own workload as a single run does), so both see the same machine load;
// the slowest point is the largest per-point median, the sweep time the
// median sweep.
func BenchmarkSweep(b *testing.B) {
	p := mustPlan(b, example(b, DefaultConfig, nil, benchVary...))
	if p.Len() != 36 {
		b.Fatalf("%d points", p.Len())
	}
	cores := runtime.GOMAXPROCS(0)
	points := make([][]time.Duration, p.Len())
	var sweeps []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := p.Run(builtin, Options{Parallel: cores}); err != nil {
			b.Fatal(err)
		}
		sweeps = append(sweeps, time.Since(t0))
		b.StopTimer()
		for i := range p.Len() {
			t1 := time.Now()
			if _, err := p.Evaluate(i, builtin, Options{}); err != nil {
				b.Fatal(err)
			}
			points[i] = append(points[i], time.Since(t1))
		}
		b.StartTimer()
	}
	median := func(d []time.Duration) time.Duration {
		d = slices.Clone(d)
		slices.Sort(d)
		return d[len(d)/2]
	}
	var slowest time.Duration
	for _, d := range points {
		slowest = max(slowest, median(d))
	}
	sweep := median(sweeps)
	target := 2 * slowest * time.Duration(p.Len()) / time.Duration(cores)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(sweep), "sweep-ms")
	b.ReportMetric(ms(slowest), "slowest-point-ms")
	b.ReportMetric(ms(target), "target-ms")
	b.ReportMetric(float64(sweep)/float64(target), "sweep/target")
}

// BenchmarkSweepSerial is the same sweep on one worker, for the speed-up.
func BenchmarkSweepSerial(b *testing.B) {
	p := mustPlan(b, example(b, DefaultConfig, nil, benchVary...))
	for b.Loop() {
		if _, err := p.Run(builtin, Options{Parallel: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
