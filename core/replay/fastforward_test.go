package replay

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/internal/harness"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/vtime"
	"github.com/kvsim/kvsim/traces"
)

// ffRun replays cfg over wl with the invariant checker on (after every
// pass, fast-forwarded ones included) and the fast-forward on or off, and
// returns prediction.json, requests.jsonl and the passes fast-forwarded.
// (The checker is off for §E's (docs/model/cases.md) 10,000 sessions: with 8,192 G1 blocks it
// takes minutes.)
func ffRun(t *testing.T, cfg *config.Config, open Opener, off bool) ([2][]byte, int64) {
	t.Helper()
	wl, err := Workload(cfg, open)
	if err != nil {
		t.Fatal(err)
	}
	check := len(wl.Sessions) < 1000
	res, err := RunWith(cfg, wl, engine.Options{Check: check, NoFastForward: off, MaxPasses: 10_000_000})
	if err != nil {
		t.Fatal(err)
	}
	return [2][]byte{res.PredictionJSON(), res.RequestsJSONL()}, res.Engine.FastForwarded
}

// ffCompare runs both ways and fails on any byte of difference; it returns
// the passes fast-forwarded.
func ffCompare(t *testing.T, cfg *config.Config, open Opener) int64 {
	t.Helper()
	on, n := ffRun(t, cfg, open, false)
	off, m := ffRun(t, cfg, open, true)
	if m != 0 {
		t.Errorf("%d passes fast-forwarded with the fast-forward off", m)
	}
	for k, name := range []string{"prediction.json", "requests.jsonl"} {
		if !bytes.Equal(on[k], off[k]) {
			t.Errorf("%s differs with the fast-forward on (%d vs %d bytes)", name, len(on[k]), len(off[k]))
		}
	}
	return n
}

// TestFastForwardChangesNothing: the fast-forward of pure decode passes
// (docs/model/engine.md ("Fast-forward of pure decode passes")) gives
// byte-identical prediction.json and requests.jsonl on the acceptance
// cases §A (all seven rows), §B, §C and §E. TestFastForwardWorldDigests
// covers the random worlds, and TestFastForwardRandomWorlds the per-pass
// record.
func TestFastForwardChangesNothing(t *testing.T) {
	gen := generatedOpener(t)
	type example struct {
		name, file string
		sets       []string
		open       Opener
	}
	var cases []example
	for _, row := range connectorRows {
		cases = append(cases, example{"A/" + row.name, "connectors.yaml", connectorSets(row.blocks, row.connector), gen})
	}
	cases = append(cases,
		example{"B/1GBps", "g2-restore.yaml", nil, traces.Open},
		example{"B/without G2", "g2-restore.yaml", []string{hostOffload + "=null"}, traces.Open},
		example{"C", "agentic-g2.yaml", nil, traces.Open})
	if !testing.Short() {
		bench := benchTrace(t)
		cases = append(cases, example{"E", "connectors.yaml", benchSets, // without the checker: 8,192 blocks a pass
			func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(bench)), nil }})
	}
	var total int64
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := traces.Read(c.file)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Parse(c.file, ".", data, c.sets)
			if err != nil {
				t.Fatal(err)
			}
			n := ffCompare(t, cfg, c.open)
			t.Logf("%d group passes fast-forwarded", n)
			total += n
		})
	}
	if total == 0 {
		t.Error("no case fast-forwarded a pass: the comparison shows nothing")
	}
}

// TestFastForwardWorldDigests: the random worlds of TestWorldDigests run
// without the recorder and with the fast-forward on give the
// prediction.json and requests.jsonl whose digests the golden file holds
// (written by recorded runs, where the fast-forward is off), and the same
// bytes as with it off.
func TestFastForwardWorldDigests(t *testing.T) {
	data, err := os.ReadFile(digestsGolden)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var total int64
	worlds := 0
	for seed := uint64(1); seed <= digestWorlds; seed++ {
		kind, yaml, rows := randomWorldOf(seed)
		cfg, err := config.Parse("world.yaml", ".", []byte(yaml), nil)
		if err != nil {
			continue
		}
		open := func(string) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(harness.RowsJSONL(rows))), nil
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			on, n := ffRun(t, cfg, open, false)
			off, _ := ffRun(t, cfg, open, true)
			got := fmt.Sprintf("%d %s %x %x ", seed, kind, sha256.Sum256(on[0]), sha256.Sum256(on[1]))
			if int(seed) > len(lines) || !strings.HasPrefix(lines[seed-1], got) {
				t.Errorf("digests differ from the golden with the fast-forward on:\n got  %s\n want %s", got, lines[seed-1])
			}
			if !bytes.Equal(on[0], off[0]) || !bytes.Equal(on[1], off[1]) {
				t.Error("reports differ with the fast-forward on and off")
			}
			if n > 0 {
				worlds++
			}
			total += n
		})
	}
	t.Logf("%d worlds fast-forwarded %d group passes", worlds, total)
	if total == 0 {
		t.Error("no world fast-forwarded a pass: the comparison shows nothing")
	}
}

// TestFastForwardTimedWorldDigests is TestFastForwardWorldDigests for the
// modelled-timing worlds of TestRandomWorldsModelledTiming (the first 60,
// whose digests testdata/timed-world-digests.golden holds).
func TestFastForwardTimedWorldDigests(t *testing.T) {
	data, err := os.ReadFile(timedDigestsGolden)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]string{}
	for _, line := range strings.Split(string(data), "\n") {
		var seed uint64
		if _, err := fmt.Sscan(line, &seed); err == nil {
			want[seed] = line
		}
	}
	types := []string{"polynomial", "roofline", "trained_physics"}
	var total int64
	for seed := uint64(1); seed <= 60; seed++ {
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
			continue
		}
		open := func(string) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(harness.RowsJSONL(rows))), nil
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			on, n := ffRun(t, cfg, open, false)
			total += n
			got := fmt.Sprintf("%d %s %s %x %x ", seed, kind, typ, sha256.Sum256(on[0]), sha256.Sum256(on[1]))
			if !strings.HasPrefix(want[seed], got) {
				t.Errorf("digests differ from the golden with the fast-forward on:\n got  %s\n want %s", got, want[seed])
			}
		})
	}
	t.Logf("%d group passes fast-forwarded", total)
}

// TestFastForwardMooncake: prediction.json and requests.jsonl of the
// Mooncake conversation trace (KVSIM_MOONCAKE, as for core/shard's tests;
// skipped when unset), without G2 and with a 200,000-block SimpleCPU tier,
// are byte-identical with the fast-forward on and off (ffCompare).
func TestFastForwardMooncake(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
	}{
		{"no G2", nil},
		{"SimpleCPU", []string{hostOffload + "={num_host_blocks: 200000, connector: simple_cpu_v0_32}"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, open := mooncakeConfig(t, tc.sets)
			t.Logf("%d group passes fast-forwarded", ffCompare(t, cfg, open))
		})
	}
}

// TestFastForwardRandomWorlds: small random worlds of the kind the
// fast-forward applies to (half of them with a rank-private G2 tier of one
// of the three connectors, whose copies take time, so that stores, fences
// and completions fall inside the decode runs; fixed timing with pass times that are not
// whole numbers or a modelled timing of Llama-3.1-8B on an H100, one to three replicas of one or two DP ranks, sessions of
// several turns, long outputs, block sizes 4 and 16, a G1 small enough to
// preempt, sometimes a virtual-time cutoff) give byte-identical
// prediction.json and requests.jsonl with the fast-forward on and off, the
// checker on after every pass; recorded, whole or in a window the run
// stops after (the page's window moves), the records, reports, passes run
// and the stop are the same both ways too (ffRecorded).
func TestFastForwardRandomWorlds(t *testing.T) {
	var total, recorded, withG2 int64
	windowed := 0
	for seed := uint64(1); seed <= 150; seed++ {
		rng := rand.New(rand.NewPCG(seed, 21))
		w := harness.World{G1: 12 + rng.IntN(120), Budget: 8 + rng.IntN(120), MaxSeq: 1 + rng.IntN(8),
			Replicas: 1 + rng.IntN(3), DP: 1 + rng.IntN(2),
			Prefill: vtime.Time(0.5 + rng.Float64()*4), Decode: vtime.Time(0.1 + rng.Float64()*2)}
		if rng.IntN(3) == 0 {
			w.Routing = "{policy: least_loaded}"
		}
		if seed%2 == 0 {
			w.G2 = 4 + rng.IntN(60)
			w.Connector = []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"}[rng.IntN(3)]
			w.D2H, w.H2D = 0.05+rng.Float64()*2, 0.05+rng.Float64()*2
			if seed%4 == 0 {
				// A small G1 and slow stores: decode steps reallocate
				// blocks still being copied (fences).
				w.G1, w.D2H = 12+rng.IntN(20), 0.02+rng.Float64()*0.2
			}
			w.Latency = vtime.Time(rng.IntN(3))
		}
		var rows []harness.Row
		next := 1
		for s := range 2 + rng.IntN(12) {
			at := vtime.Time(rng.IntN(40))
			for turn := range 1 + rng.IntN(3) {
				var hash []int
				for range 1 + rng.IntN(6) {
					hash = append(hash, 1+rng.IntN(next+3))
					next++
				}
				rows = append(rows, harness.Row{ID: fmt.Sprintf("s%dt%d", s, turn), Session: fmt.Sprintf("s%d", s),
					At: at, Later: turn > 0, Delay: vtime.Time(rng.IntN(5)), Hash: hash, Out: 1 + rng.IntN(80)})
			}
		}
		yaml := w.YAML()
		if rng.IntN(2) == 0 {
			yaml = strings.ReplaceAll(yaml, "        block_size: 4\n", "        block_size: 16\n")
		}
		if rng.IntN(4) == 0 {
			yaml = strings.Replace(yaml, "  load: {type: trace_timestamps}", fmt.Sprintf("  load: {type: trace_timestamps}\n  stop: {max_virtual_time_seconds: %v}", 0.02+rng.Float64()*0.1), 1)
		}
		var sets []string
		if typ := []string{"", "polynomial", "roofline", "trained_physics"}[rng.IntN(4)]; typ != "" {
			sets = []string{"engine.model=llama-3.1-8b", "engine.hardware=h100",
				"engine.workers.aggregated.timing={type: " + typ + "}"}
		}
		cfg, err := config.Parse("world.yaml", ".", []byte(yaml), sets)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, yaml)
		}
		open := func(string) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(harness.RowsJSONL(rows))), nil
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			n := ffCompare(t, cfg, open)
			total += n
			if w.G2 > 0 {
				withG2 += n
			}
			if t.Failed() {
				t.Log(yaml)
				return
			}
			// Recorded, whole and in a window the run stops after: the
			// same reports as unrecorded, and the same records, passes
			// run and stop with the fast-forward on and off.
			on, _ := ffRun(t, cfg, open, false)
			whole, nw, most := ffRecorded(t, cfg, open, record.Window{}, &on)
			recorded += nw
			from := 1 + rng.IntN(most)
			win, err := record.ParseWindow(fmt.Sprintf("%d:%d", from, from+rng.IntN(40)))
			if err != nil {
				t.Fatal(err)
			}
			if _, nw, _ = ffRecorded(t, cfg, open, win, nil); nw > 0 {
				windowed++
			}
			if len(whole) == 0 {
				t.Error("an empty record")
			}
		})
	}
	t.Logf("%d group passes fast-forwarded; recorded whole, %d; %d windowed runs fast-forwarded", total, recorded, windowed)
	if recorded == 0 || windowed == 0 {
		t.Error("no recorded run fast-forwarded a pass")
	}
	t.Logf("%d group passes fast-forwarded, %d with a G2 tier", total, withG2)
	if total == 0 || withG2 == 0 {
		t.Error("no world (with a G2 tier) fast-forwarded a pass")
	}
}

// TestFastForwardAffinityWorlds: random worlds of two or three replicas
// under session affinity, each with a rank-private G2 tier whose stores are
// slow, and sessions whose turns extend the last one's prompt: a turn often
// finds its prefix on its replica's tier still being stored (a deferred
// lookup) while the other replicas decode. Reports are byte-identical with
// the fast-forward on and off.
func TestFastForwardAffinityWorlds(t *testing.T) {
	var total int64
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		w := harness.World{G1: 40 + rng.IntN(120), Budget: 16 + rng.IntN(120), MaxSeq: 1 + rng.IntN(8),
			Replicas: 2 + rng.IntN(2), DP: 1, Routing: "session_affinity",
			Prefill: vtime.Time(0.5 + rng.Float64()*4), Decode: vtime.Time(0.1 + rng.Float64()*2),
			G2: 8 + rng.IntN(60), Connector: []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"}[rng.IntN(3)],
			D2H: 0.01 + rng.Float64()*0.3, H2D: 0.05 + rng.Float64()*2}
		var rows []harness.Row
		next := 1
		for s := range 2 + rng.IntN(8) {
			at := vtime.Time(rng.IntN(40))
			var hash []int
			for turn := range 1 + rng.IntN(4) {
				for range 1 + rng.IntN(4) {
					hash = append(hash, next)
					next++
				}
				rows = append(rows, harness.Row{ID: fmt.Sprintf("s%dt%d", s, turn), Session: fmt.Sprintf("s%d", s),
					At: at, Later: turn > 0, Delay: vtime.Time(rng.IntN(3)), Hash: slices.Clone(hash), Out: 1 + rng.IntN(80)})
			}
		}
		cfg, err := config.Parse("world.yaml", ".", []byte(w.YAML()), nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		open := func(string) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(harness.RowsJSONL(rows))), nil
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			total += ffCompare(t, cfg, open)
			if t.Failed() {
				t.Log(w.YAML())
			}
		})
	}
	t.Logf("%d group passes fast-forwarded", total)
	if total == 0 {
		t.Error("no world fast-forwarded a pass")
	}
}

// ffRecorded runs cfg recorded (a whole record, or the window win the run
// stops after, as a window move of the page does) with the fast-forward on
// and off, the checker on, and fails on any difference of the written
// record (passes.jsonl), the reports, the passes run or the stop, or when
// the reports differ from want (an unrecorded run's, when not nil). It
// returns the record, the passes fast-forwarded and the most passes a
// rank ended.
func ffRecorded(t *testing.T, cfg *config.Config, open Opener, win record.Window, want *[2][]byte) ([]byte, int64, int) {
	t.Helper()
	type out struct {
		rec, pred, reqs []byte
		passes, ff      int64
		stopped         bool
		most            int
	}
	var runs [2]out
	for i, off := range []bool{false, true} {
		wl, err := Workload(cfg, open)
		if err != nil {
			t.Fatal(err)
		}
		rr := record.NewRecorder()
		opts := engine.Options{Check: true, Observer: rr, NoFastForward: off}
		if !win.Whole() {
			rr = record.NewWindowRecorder(win, nil)
			opts.Observer, opts.Stop = rr, rr.Past
		}
		res, err := RunWith(cfg, wl, opts)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := rr.Record().WriteWindow(&b, win); err != nil {
			t.Fatal(err)
		}
		most := 0 // the passes a rank ended (a cutoff may leave one started)
		for k := range rr.Record().Ranks {
			most = max(most, rr.Record().RunPasses(k))
		}
		runs[i] = out{b.Bytes(), res.PredictionJSON(), res.RequestsJSONL(), res.Engine.Passes, res.Engine.FastForwarded, res.Engine.Stopped(), most}
	}
	on, off := runs[0], runs[1]
	if !bytes.Equal(on.rec, off.rec) {
		t.Errorf("window %q: passes.jsonl differs with the fast-forward on (%d vs %d bytes)", win.Spec, len(on.rec), len(off.rec))
	}
	if !bytes.Equal(on.pred, off.pred) || !bytes.Equal(on.reqs, off.reqs) {
		t.Errorf("window %q: the recorded reports differ with the fast-forward on and off", win.Spec)
	}
	if on.passes != off.passes || on.stopped != off.stopped {
		t.Errorf("window %q: %d passes (stopped %v) with the fast-forward on, %d (%v) off", win.Spec, on.passes, on.stopped, off.passes, off.stopped)
	}
	if off.ff != 0 {
		t.Errorf("%d passes fast-forwarded with the fast-forward off", off.ff)
	}
	if want != nil && (!bytes.Equal(want[0], on.pred) || !bytes.Equal(want[1], on.reqs)) {
		t.Error("the recorded run's reports differ from the unrecorded run's")
	}
	return on.rec, on.ff, on.most
}
