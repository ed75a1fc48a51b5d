package replay

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/record"
)

// BenchmarkCheckpointWindows moves a pass window of 2,000 passes to 20
// random places of the Mooncake conversation trace (docs/performance.md,
// "Scrubbing from checkpoints"), the way the page's pass view does: each
// move from the first pass (from-start), or with one Checkpoints kept
// across the moves (checkpoints). It reports the median and the worst move
// after the first, the first one (which takes the snapshots on its way),
// the heap the store holds, and the size of its first copy. The trace is not in the
// repository: set KVSIM_MOONCAKE to its conversation.yaml, and
// KVSIM_MOONCAKE_SETS to an override (the G2 tier) if wanted.
func BenchmarkCheckpointWindows(b *testing.B) {
	path, dir, data, files := mooncakeCase(b)
	var sets []string
	if s := os.Getenv("KVSIM_MOONCAKE_SETS"); s != "" {
		sets = []string{s}
	}
	job := Job{Name: path, Dir: dir, Config: data, Sets: sets, Traces: Traces{Files: files}, Workloads: NewWorkloads()}
	for _, use := range []bool{false, true} {
		name := map[bool]string{false: "from-start", true: "checkpoints"}[use]
		b.Run(name, func(b *testing.B) { benchWindows(b, job, use) })
	}
}

func benchWindows(b *testing.B, job Job, use bool) {
	const width, moves = 2000, 20
	for range b.N {
		cps := NewCheckpoints()
		job.Checkpoints = cps
		if !use {
			job.Checkpoints = nil
		}
		rng := rand.New(rand.NewPCG(1, 2))
		var times []time.Duration
		most := 216000 // about rank 0's passes; windows past a rank's end record less
		for i := range moves {
			from := 1 + rng.IntN(most-width)
			win, err := record.ParseWindow(fmt.Sprintf("%d:%d", from, from+width-1))
			if err != nil {
				b.Fatal(err)
			}
			job.Capture = Capture{Passes: true, Window: win, StopAfterWindow: true}
			t0 := time.Now()
			if _, err := Run(job); err != nil {
				b.Fatal(err)
			}
			d := time.Since(t0)
			if i == 0 {
				b.ReportMetric(d.Seconds()*1000, "ms-first")
				continue
			}
			times = append(times, d)
		}
		slices.Sort(times)
		b.ReportMetric(times[len(times)/2].Seconds()*1000, "ms/move-median")
		b.ReportMetric(times[len(times)-1].Seconds()*1000, "ms/move-worst")
		if !use {
			continue
		}
		// What the store holds once no engine runs (the page's worker
		// between moves): its snapshots, and the identity pages they share.
		var with, without runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&with)
		n := len(cps.snaps)
		cps.snaps = nil
		runtime.GC()
		runtime.ReadMemStats(&without)
		b.ReportMetric(float64(n), "snapshots")
		b.ReportMetric(float64(cps.Taken+cps.Restored), "copies")
		b.ReportMetric(float64(int64(with.HeapAlloc)-int64(without.HeapAlloc))/(1<<20), "MiB-store")
		b.ReportMetric(float64(cps.size)/(1<<20), "MiB-copied-first")
	}
}

// BenchmarkCheckpointCopy is one engine checkpoint of the Mooncake
// conversation trace (KVSIM_MOONCAKE, as above) a quarter of the way
// through (1,500 s simulated, about 365,000 group passes), recorded by a
// pending recorder as the page's window moves are: the copy a window
// move restores and a run toward a window takes.
func BenchmarkCheckpointCopy(b *testing.B) {
	cfg, files := mooncakeConfig(b, nil)
	wl, err := Workload(cfg, files)
	if err != nil {
		b.Fatal(err)
	}
	e, err := engine.New(cfg, wl, engine.Options{Observer: record.NewPendingRecorder()})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.RunUntil(1_500_000); err != nil {
		b.Fatal(err)
	}
	c := engine.NewCopier()
	for b.Loop() {
		if _, err := e.Snapshot(c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(c.Copied())/(1<<20), "MiB-copied")
}
