package main

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/sweep"
	"github.com/kvsim/kvsim/traces"
)

// defaultSweep is the sweep view's default: `kvsim sweep` with no flags
// (the built-in §A (docs/model/cases.md) config, named as the CLI names it, and the default
// grid).
func defaultSweep(t *testing.T) *sweepJob {
	return &sweepJob{Config: string(mustRead(t, sweep.DefaultConfig)), Name: "traces/" + sweep.DefaultConfig,
		Vary: slices.Clone(sweep.DefaultVary)}
}

// TestSweepGoldenNative (re)writes or checks testdata/sweep-A.* against
// what `kvsim sweep` computes and writes (cmd/kvsim/sweep.go: NewPlan with
// the built-in config, Plan.Run on all cores, Result.CSV and JSON).
func TestSweepGoldenNative(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("the goldens come from the native run")
	}
	data, err := traces.Read(sweep.DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sweep.NewPlan(sweep.Spec{Name: "traces/" + sweep.DefaultConfig, Dir: ".", Data: data, Vary: sweep.DefaultVary})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(replay.Traces{Builtin: true}, sweep.Options{Parallel: 4})
	if err != nil {
		t.Fatal(err)
	}
	for kind, got := range map[string][]byte{"csv": res.CSV(), "json": res.JSON()} {
		if *update {
			if err := os.WriteFile(goldenPath("sweep-A", kind), got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		compareGolden(t, "sweep-A", kind, got)
	}
}

// TestSweepBridge evaluates the default sweep the way the page does: the
// plan from one worker, the points by index from two others in an
// interleaved order, the files from a fourth. sweep.csv and sweep.json
// equal the CLI's (the goldens) byte for byte, natively and under node;
// the §A rows are points with the published numbers.
func TestSweepBridge(t *testing.T) {
	fresh := func() *sweepJob {
		sweepCache.key, sweepCache.plan = "", nil // another worker
		return defaultSweep(t)
	}
	info, jerr := fresh().info()
	if jerr != nil {
		t.Fatal(jerr)
	}
	if info.Points != 24 || len(info.Axes) != 2 || info.X != 0 || len(info.Lines) != 3 {
		t.Fatalf("plan %+v", info)
	}
	for k, conn := range []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"} {
		l := info.Lines[k]
		if l.Name != conn || len(l.Points) != 8 || l.X[0] != 64 || l.X[7] != 2048 || l.Points[2] != 2*3+k {
			t.Errorf("line %d: %+v", k, l)
		}
	}
	summaries := make([][]byte, info.Points)
	order := make([]int, info.Points)
	for i := range order {
		order[i] = (i*7 + 3) % info.Points
	}
	for n, i := range order {
		if n%2 == 0 {
			fresh()
		}
		s, pt, jerr := defaultSweep(t).point(i)
		if jerr != nil {
			t.Fatal(jerr)
		}
		summaries[i] = s
		want := map[int][2]string{6: {"11488", "8800"}, 23: {"15568", "5248"}, 7: {"14144", "6544"}}
		if w, ok := want[i]; ok && (pt.Restored != w[0] || pt.Recomputed != w[1]) {
			t.Errorf("point %d: %+v, want restored %s recomputed %s", i, pt, w[0], w[1])
		}
		if i == 6 && (pt.TTFTP50 != "6" || pt.TTFTP99 != "71") {
			t.Errorf("point 6 TTFT %s / %s", pt.TTFTP50, pt.TTFTP99)
		}
	}
	fresh()
	csv, js, curves, jerr := defaultSweep(t).collect(summaries)
	if jerr != nil {
		t.Fatal(jerr)
	}
	compareGolden(t, "sweep-A", "csv", csv)
	compareGolden(t, "sweep-A", "json", js)
	if len(curves.Restored) != 3 || curves.Restored[2].Name != "simple_cpu_v0_32" || curves.Restored[2].Y[7] != 15568 ||
		len(curves.TTFTP99) != 3 || curves.TTFTP50[0].Y[2] != 6 {
		t.Errorf("curves %+v", curves)
	}
}

// TestSweepErrors: a bad --vary is the core's message, placed on the grid.
func TestSweepErrors(t *testing.T) {
	s := defaultSweep(t)
	s.Vary = []string{"num_host_blockz=1,2"}
	if _, jerr := s.info(); jerr == nil || jerr.Kind != "sweep" || !strings.HasPrefix(jerr.Msg, "--vary num_host_blockz=1,2: unknown path") {
		t.Errorf("%+v", jerr)
	}
	var n []string
	for i := 1; i <= 45; i++ {
		n = append(n, strconv.Itoa(i))
	}
	s.Vary = []string{"host_offload.num_host_blocks=" + strings.Join(n, ","), "scheduler.max_sequences=" + strings.Join(n, ",")}
	if _, jerr := s.info(); jerr == nil || !strings.Contains(jerr.Msg, "the grid has 2025 points; the browser runs at most 2000") {
		t.Errorf("%+v", jerr)
	}
	s.Config = "traffic: ["
	s.Vary = sweep.DefaultVary
	if _, jerr := s.info(); jerr == nil || jerr.Kind != "config" {
		t.Errorf("%+v", jerr)
	}
}
