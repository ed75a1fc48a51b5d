package main

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvsim/kvsim/core/numfmt"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/wasm/proto"
)

func indexAll(t *testing.T, outs []runOut) *passes {
	t.Helper()
	recs := make([]*record.Record, len(outs))
	for i, o := range outs {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		if o.Record == nil {
			t.Fatalf("variant %d kept no record: %s", i, o.RecordNote)
		}
		recs[i] = o.Record
	}
	p := newPasses(recs)
	for steps := 0; !p.step(5 * time.Millisecond); steps++ {
		if steps > 100000 {
			t.Fatal("indexing does not end")
		}
	}
	if p.indexed != p.total {
		t.Errorf("indexed %d of %d", p.indexed, p.total)
	}
	return p
}

// TestRestoreFrame: in §B (docs/model/cases.md), the pass whose events complete the H2D copy
// flashes exactly the G1 slots that hold the restored blocks.
func TestRestoreFrame(t *testing.T) {
	j := goldenJob(t, "g2-restore.yaml", nil)
	j.Passes = true
	p := indexAll(t, j.run(nil))
	tl := p.tl[0][0]
	restore := 0
	for i, c := range tl.Counts {
		if c[proto.MarkRestore] > 0 {
			restore = i + 1
			break
		}
	}
	if restore == 0 {
		t.Fatal("no restore marker in §B")
	}
	if len(tl.Transfers) == 0 || math.IsNaN(tl.Transfers[0].Complete) {
		t.Fatalf("transfers %+v", tl.Transfers)
	}
	f, meta := decodedFrame(t, p, restore)
	snap, _ := p.recs[0].Seek(0, restore)
	want := map[string]bool{}
	for _, e := range snap.Events {
		if e.Kind == "h2d_complete" {
			for _, b := range e.Blocks {
				want[b] = true
			}
		}
	}
	flashed := 0
	for i, c := range f.G1 {
		name := f.Str(c.Name)
		if name != p.recs[0].BlockName(snap.G1[i].Block) {
			t.Errorf("slot %d: name %q, record %q", i, name, p.recs[0].BlockName(snap.G1[i].Block))
		}
		if c.State != snap.G1[i].State {
			t.Errorf("slot %d: state %c, record %c", i, c.State, snap.G1[i].State)
		}
		if (c.Flash == proto.FlashRestored) != want[name] {
			t.Errorf("slot %d (%s): flash %d", i, name, c.Flash)
		}
		if c.Flash == proto.FlashRestored {
			flashed++
		}
	}
	if flashed == 0 {
		t.Error("no restored slot flashed")
	}
	if meta == nil || meta.Pass != restore || len(f.G2) == 0 {
		t.Error("frame without meta or G2")
	}
	if got, err := proto.DecodeTimeline(proto.EncodeTimeline(tl)); err != nil || len(got.Start) != len(tl.Start) ||
		got.Counts[restore-1] != tl.Counts[restore-1] || len(got.Transfers) != len(tl.Transfers) {
		t.Errorf("timeline round trip: %v", err)
	}
}

// TestDivergenceMatchesDiff: the index marks each timeline with record.Diff's
// first divergence (the index runs Diff after the passes).
func TestDivergenceMatchesDiff(t *testing.T) {
	j := goldenJob(t, "connectors.yaml", nil)
	j.Passes = true
	j.Variants = nil
	for _, c := range []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"} {
		j.Variants = append(j.Variants, proto.Variant{Label: c, Sets: []string{hostOffload + ".num_host_blocks=192", hostOffload + ".connector=" + c}})
	}
	p := indexAll(t, j.run(nil))
	for v := 1; v < 3; v++ {
		d, err := record.Diff(p.recs[0], p.recs[v], 0)
		if err != nil {
			t.Fatal(err)
		}
		if d.FirstDivergent == 0 || p.tl[v][0].Diverge != d.FirstDivergent {
			t.Errorf("variant %d: index diverges at %d, record.Diff at %d", v, p.tl[v][0].Diverge, d.FirstDivergent)
		}
	}
	meta := p.meta()
	if !meta[0].Recorded || meta[0].Ranks[0].G1 != 128 || meta[0].Ranks[0].G2 != 192 || meta[0].Ranks[0].Passes == 0 {
		t.Errorf("meta %+v", meta[0])
	}
}

// TestRecordLimit: a run over MaxRecordRequests keeps only its first
// proto.WindowPasses passes of each rank (replay.Capture.LargeWindow), says
// so in its note, indexes like any record, and its passes.jsonl is that
// window's file.
func TestRecordLimit(t *testing.T) {
	j := goldenJob(t, "connectors.yaml", nil)
	j.Passes = true
	j.Overrides = []string{"traffic={source: {type: synthetic-session, new_input_tokens_per_turn: 16, output_tokens_per_turn: 2, session: {turns: 2}}, load: {type: concurrency, concurrency: 4}, stop: {sessions: 2600}}"}
	outs := j.run(nil)
	o := outs[0]
	if o.Err != nil || o.Record == nil {
		t.Fatalf("%+v", o.Err)
	}
	want := "the per-pass record is kept for runs of at most 5,000 requests; this one has 5,200, so only passes 1 to 2,000 of each rank are kept (the run has "
	if !strings.HasPrefix(o.RecordNote, want) {
		t.Errorf("note %q; want it to start %q", o.RecordNote, want)
	}
	if o.Record.Windowed() != "1:2000" || o.Record.NumLines(0) != proto.WindowPasses || o.Output.Stats.Passes <= proto.WindowPasses {
		t.Errorf("window %q, %d lines of %d passes", o.Record.Windowed(), o.Record.NumLines(0), o.Output.Stats.Passes)
	}
	p := indexAll(t, outs)
	if got := len(p.tl[0][0].Start); got != proto.WindowPasses {
		t.Errorf("timeline of %d passes; want %d", got, proto.WindowPasses)
	}
	text, e := o.file(proto.FilePasses)
	if e != nil {
		t.Fatal(e)
	}
	dec, err := record.Decode(bytes.NewReader(text))
	if err != nil || dec.Windowed() != "1:2000" || dec.NumLines(0) != proto.WindowPasses {
		t.Fatalf("passes.jsonl: %v", err)
	}
}

// TestDivergencesOfTheDefaultCompare: the worker's divergences for §A at
// 192 G2 blocks are kvsim diff's: v0_32 first differs from v0_24 at pass
// 658, where v0_24 evicts s2t2/s2t3 blocks and v0_32 s0t3/s0t4 blocks, and
// v0_32 restores 166 blocks (2,656 tokens) that v0_24 lost.
func TestDivergencesOfTheDefaultCompare(t *testing.T) {
	j := goldenJob(t, "connectors.yaml", nil)
	j.Passes = true
	j.Variants = nil
	for _, c := range []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"} {
		j.Variants = append(j.Variants, proto.Variant{Label: c, Sets: []string{hostOffload + ".num_host_blocks=192", hostOffload + ".connector=" + c}})
	}
	p := indexAll(t, j.run(nil))
	ds := p.divergences()
	if len(ds) != 2 {
		t.Fatalf("%d divergences; want 2", len(ds))
	}
	d := ds[0]
	if d.Run != 1 || d.Pass != 658 || len(d.Passes) == 0 || d.Passes[0].Pass != 658 {
		t.Fatalf("divergence %+v", d)
	}
	first, this := d.Passes[0].First, d.Passes[0].This
	if len(first) != 8 || len(this) != 8 || first[0] != (proto.TierBlock{Tier: "g2", Block: "s2t3#39"}) || this[0] != (proto.TierBlock{Tier: "g2", Block: "s0t4#47"}) {
		t.Errorf("pass 658: first run evicted %v, this one %v", first, this)
	}
	if d.RestoresOnlyThis != 166 || d.RestoresOnlyFirst != 0 || d.RestoresOnlyThis*d.BlockSize != 2656 {
		t.Errorf("restores only v0_32 %d, only v0_24 %d (block size %d)", d.RestoresOnlyThis, d.RestoresOnlyFirst, d.BlockSize)
	}
	// SimpleCPU issues the requests in another order (its closed loop
	// moves differently): still comparable, and it differs at once.
	if s := ds[1]; s.Refused != "" || s.Pass == 0 || len(s.Passes) == 0 {
		t.Errorf("SimpleCPU against v0_24: %+v", s)
	}
}

// TestAnswerBlocksAreMarked: in §A at 2,048 G2 blocks SimpleCPU stores
// answer blocks; the run-end frame marks exactly the cells whose block lies
// past its request's full prompt blocks.
func TestAnswerBlocksAreMarked(t *testing.T) {
	j := goldenJob(t, "connectors.yaml", nil)
	j.Passes = true
	outs := j.run(nil)
	p := indexAll(t, outs)
	p.setPrompts(0, outs[0].Output.Records)
	rec := p.recs[0]
	f, _ := decodedFrame(t, p, rec.NumLines(0))
	prompt := map[string]int{}
	for _, r := range outs[0].Output.Records {
		prompt[r.RequestID] = r.InputLength
	}
	answers := 0
	for _, c := range f.G2 {
		name := f.Strings[c.Name]
		blk := record.Block{}
		for i := len(name) - 1; i >= 0; i-- {
			if name[i] == '#' {
				blk.Request = name[:i]
				fmt.Sscan(name[i+1:], &blk.Index)
				break
			}
		}
		want := blk.Index >= prompt[blk.Request]/rec.BlockSize
		if c.Answer != want {
			t.Errorf("%s: answer %v, want %v (prompt %d tokens)", name, c.Answer, want, prompt[blk.Request])
		}
		if c.Answer {
			answers++
		}
	}
	if answers == 0 {
		t.Error("no answer block in SimpleCPU's G2 (scenario)")
	}
}

// TestRecordLimitFromPass: the page's "passes from" (proto.RunJob.FromPass)
// moves the kept window of a long run: the record, its meta and its
// timeline start at that pass, and the meta says how many passes each
// rank ran; a window past the run's end keeps nothing and the note says
// how far the run went.
func TestRecordLimitFromPass(t *testing.T) {
	j := goldenJob(t, "connectors.yaml", nil)
	j.Passes = true
	j.Overrides = []string{"traffic={source: {type: synthetic-session, new_input_tokens_per_turn: 16, output_tokens_per_turn: 2, session: {turns: 2}}, load: {type: concurrency, concurrency: 4}, stop: {sessions: 2600}}"}
	first := j.run(nil)[0]
	if first.Record == nil {
		t.Fatalf("%+v", first.Err)
	}
	ran := first.Record.RunPasses(0)
	if ran <= proto.WindowPasses+500 {
		t.Fatalf("the run has %d passes on rank 0; the test needs more than %d", ran, proto.WindowPasses+500)
	}
	j.FromPass = ran - 499
	outs := j.run(nil)
	o := outs[0]
	if o.Record == nil {
		t.Fatalf("%+v", o.Err)
	}
	wantNote := fmt.Sprintf("so only passes %s to %s of each rank are kept", numfmt.Thousands(int64(ran-499)), numfmt.Thousands(int64(ran-500+proto.WindowPasses)))
	if !strings.Contains(o.RecordNote, wantNote) || strings.Contains(o.RecordNote, "that far") {
		t.Errorf("note %q; want %q in it", o.RecordNote, wantNote)
	}
	p := indexAll(t, outs)
	m := p.meta()[0].Ranks[0]
	if m.First != ran-499 || m.Ran != ran || m.Passes != ran {
		t.Errorf("meta first %d, ran %d, passes %d; want %d, %d, %d", m.First, m.Ran, m.Passes, ran-499, ran, ran)
	}
	tl := p.tl[0][0]
	if tl.First != ran-499 || len(tl.Start) != m.Lines-m.First+1 || len(tl.Start) < 500 {
		t.Errorf("timeline from %d with %d passes; meta lines %d", tl.First, len(tl.Start), m.Lines)
	}
	in, err := o.Record.Info(0, ran-100)
	if err != nil || float64(in.StartMs) != tl.Start[ran-100-tl.First] {
		t.Errorf("pass %d: info %+v (%v), timeline start %v", ran-100, in, err, tl.Start[ran-100-tl.First])
	}
	if _, _, err := p.frame(0, 0, ran-10); err != nil {
		t.Errorf("frame of pass %d: %v", ran-10, err)
	}
	if _, _, err := p.frame(0, 0, ran-600); err == nil {
		t.Errorf("frame of pass %d, before the window: no error", ran-600)
	}

	j.FromPass = ran + 10_000
	o = j.run(nil)[0]
	if o.Record == nil || !strings.Contains(o.RecordNote, "no rank ran that far (the longest ran "+numfmt.Thousands(int64(ran))) {
		t.Errorf("past the end: note %q", o.RecordNote)
	}
	if o.Record != nil && o.Record.FirstPass(0) <= o.Record.NumLines(0) {
		t.Errorf("past the end: rank 0 keeps passes %d to %d", o.Record.FirstPass(0), o.Record.NumLines(0))
	}
}

// TestPassesOnlyWindow: the pass view's window move (RunJob.PassesOnly)
// stops each run once every rank has run the window's last pass, keeps
// the record the whole run keeps of that window (the same passes.jsonl,
// the same frames), answers no results, and marks its meta Stopped; a
// window that reaches the run's end runs whole. A single run's moves,
// back and forth, run from the checkpoints the earlier ones took (scrub);
// a compare's keep none. A worker holding the windows runs under the
// lower memory limit (limitMemory), a whole run under the usual one.
func TestPassesOnlyWindow(t *testing.T) {
	var limits []bool
	defer func(f func(bool)) { limitMemory = f }(limitMemory)
	limitMemory = func(windows bool) { limits = append(limits, windows) }
	j := goldenJob(t, "connectors.yaml", nil)
	j.Passes = true
	j.Variants = append(j.Variants, proto.Variant{Label: "y", Sets: []string{"engine.workers.aggregated.kv_cache.host_offload.connector=offloading_v0_24"}})
	j.Overrides = []string{"traffic={source: {type: synthetic-session, new_input_tokens_per_turn: 16, output_tokens_per_turn: 2, session: {turns: 2}}, load: {type: concurrency, concurrency: 4}, stop: {sessions: 2600}}"}
	ran := j.run(nil)[0].Record.RunPasses(0)
	froms := []int{ran / 3, ran - 100, ran / 5, ran - 300}
	wholes := map[int][]runOut{}
	limits = nil
	for _, from := range froms {
		j.FromPass, j.PassesOnly = from, false
		wholes[from] = j.run(nil)
	}
	if want := slices.Repeat([]bool{false}, len(froms)); !slices.Equal(limits, want) {
		t.Errorf("memory limits %v for whole runs; want %v", limits, want)
	}
	// The compare's moves, then the first run's alone: only a single
	// run keeps checkpoints (ScrubBytes).
	for _, vs := range [][]proto.Variant{j.Variants, j.Variants[:1]} {
		limits = nil
		for _, from := range froms {
			movePassesOnly(t, j, vs, from, ran, wholes[from])
		}
		if len(limits) < len(froms) || slices.Contains(limits, false) {
			t.Errorf("%d runs: memory limits %v for %d moves; want the lower one for each (true: the windows)", len(vs), limits, len(froms))
		}
		taken, restored := 0, 0
		for _, c := range scrub.cps {
			if c != nil {
				taken, restored = taken+c.Taken, restored+c.Restored
			}
		}
		t.Logf("%d runs, %d passes on rank 0; checkpoints: %d taken, %d runs from one", len(vs), ran, taken, restored)
		if single := len(vs) == 1; single && (len(scrub.cps) != 1 || scrub.cps[0] == nil || taken == 0 || restored < 1) ||
			!single && (len(scrub.cps) != len(vs) || taken > 0) {
			t.Errorf("%d runs: the window moves kept %d stores, took %d checkpoints and ran %d times from one", len(vs), len(scrub.cps), taken, restored)
		}
	}
}

// movePassesOnly moves the pass view of job j's runs vs to from, and
// checks each run's kept window against its whole run's.
func movePassesOnly(t *testing.T, j *job, vs []proto.Variant, from, ran int, whole []runOut) {
	t.Helper()
	run := &proto.RunJob{Config: j.Config, Name: j.Name, Overrides: j.Overrides, Variants: vs, FromPass: from, PassesOnly: true}
	r, _ := roundTrip(t, proto.Request{Op: proto.OpRun, ID: 9, Run: run}, nil, nil)
	if r.Error != nil || r.Result == nil || len(r.Result.Passes) != len(vs) {
		t.Fatalf("from %d: reply %+v", from, r)
	}
	stops := from+proto.WindowPasses-1 < ran
	for v, o := range r.Result.Results {
		if o.Error != nil || o.View != nil || o.Prediction != 0 || !strings.Contains(o.RecordNote, "so only passes "+numfmt.Thousands(int64(from))) {
			t.Errorf("from %d, run %d: outcome %+v", from, v, o)
		}
		if got := r.Result.Passes[v].Stopped; got != stops {
			t.Errorf("from %d, run %d: stopped %v; want %v", from, v, got, stops)
		}
		var a, b bytes.Buffer
		win := largeWindow(from)
		if err := whole[v].Record.WriteWindow(&a, win); err != nil {
			t.Fatal(err)
		}
		if err := kept.passes.recs[v].WriteWindow(&b, win); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("from %d, run %d: the stopped run's passes.jsonl differs from the whole run's", from, v)
		}
		fa, _, errA := indexAll(t, whole).frame(v, 0, from+7)
		fb, _, errB := kept.passes.frame(v, 0, from+7)
		if errA != nil || errB != nil || !bytes.Equal(fa, fb) {
			t.Errorf("from %d, run %d: frame of pass %d differs (%v, %v)", from, v, from+7, errA, errB)
		}
	}
	if m := r.Result.Passes[0].Ranks[0]; stops && m.Ran >= ran {
		t.Errorf("from %d: ran %d passes of %d; the run did not stop", from, m.Ran, ran)
	}
}

// TestFanOut: a compare that may fan out (RunJob.FanOut) does when its
// records keep a window: the worker says so before it runs, then answers
// the pass view's windows alone; a compare small enough for whole records
// runs here as before.
func TestFanOut(t *testing.T) {
	conn := string(mustRead(t, "connectors.yaml"))
	long := "traffic={source: {type: synthetic-session, new_input_tokens_per_turn: 16, output_tokens_per_turn: 2, session: {turns: 2}}, load: {type: concurrency, concurrency: 4}, stop: {sessions: 2600}}"
	vs := []proto.Variant{{Label: "a"}, {Label: "b", Sets: []string{"engine.workers.aggregated.kv_cache.host_offload.connector=offloading_v0_24"}}}
	for _, tc := range []struct {
		overrides []string
		fan       bool
	}{{[]string{long}, true}, {nil, false}} {
		run := &proto.RunJob{Config: conn, Name: "connectors.yaml", Overrides: tc.overrides, Variants: vs, Passes: true, FanOut: true}
		fanned := 0
		r, a := roundTrip(t, proto.Request{Op: proto.OpRun, ID: 5, Run: run}, nil, func(p *answer) {
			if pr := p.reply.Progress; pr != nil && pr.FanOut {
				if fanned++; pr.Variants != 2 || p.reply.ID != 5 {
					t.Errorf("fan-out progress %+v", p.reply)
				}
			}
		})
		if r.Error != nil || r.Result == nil || len(r.Result.Results) != 2 || len(r.Result.Passes) != 2 {
			t.Fatalf("fan %v: reply %+v", tc.fan, r)
		}
		if (fanned == 1) != tc.fan || fanned > 1 {
			t.Errorf("fan %v: %d fan-out replies", tc.fan, fanned)
		}
		// A fanned-out job's windows are indexed when the page asks,
		// after the runs' results (ui.RunView.fanFinish).
		if want := map[bool]int{true: 0, false: 5}[tc.fan]; !r.Result.Indexing || a.next != want {
			t.Errorf("fan %v: indexing %v, next %d (want %d)", tc.fan, r.Result.Indexing, a.next, want)
		}
		for v, o := range r.Result.Results {
			if o.Error != nil || (o.View == nil) != tc.fan || r.Result.Passes[v].Stopped != tc.fan {
				t.Errorf("fan %v, run %d: view %v, stopped %v, error %v", tc.fan, v, o.View != nil, r.Result.Passes[v].Stopped, o.Error)
			}
		}
	}
}

// TestFramesNameWhatTheRecordHolds: 150 frames of §A's rank 0 at 192
// host blocks (OffloadingConnector v0.24), asked in a jumbled order (so
// the per-block cache is filled out of order), name in each G1 and G2
// cell the block, key, owner and hue the record gives its slot or entry,
// and list each block name once.
func TestFramesNameWhatTheRecordHolds(t *testing.T) {
	j := goldenJob(t, "connectors.yaml", goldenCases[2].sets)
	j.Passes = true
	p := indexAll(t, j.run(nil))
	rec := p.recs[0]
	n := rec.NumPasses(0)
	hues := map[string]int32{}
	cells := 0
	for k := range 150 {
		pass := 1 + (k*7919)%n
		f, _ := decodedFrame(t, p, pass)
		snap, err := rec.Seek(0, pass)
		if err != nil {
			t.Fatal(err)
		}
		listed := map[int32]bool{}
		cell := func(where string, c proto.Cell, block, owner int32) {
			cells++
			name := rec.BlockName(block)
			switch {
			case f.Str(c.Name) != name:
				t.Fatalf("pass %d %s: name %q, record %q", pass, where, f.Str(c.Name), name)
			case c.Key != key(name):
				t.Fatalf("pass %d %s: key %d, want %d", pass, where, c.Key, key(name))
			case f.Str(c.Owner) != rec.Request(owner):
				t.Fatalf("pass %d %s: owner %q, record %q", pass, where, f.Str(c.Owner), rec.Request(owner))
			}
			if block < 0 {
				if c.Session != -1 {
					t.Fatalf("pass %d %s: hue %d without a block", pass, where, c.Session)
				}
				return
			}
			s := rec.Block(block).Session
			if h, ok := hues[s]; ok && h != c.Session || c.Session != p.sess[0][s] {
				t.Fatalf("pass %d %s: session %q has hue %d, earlier %d, the variant's %d", pass, where, s, c.Session, h, p.sess[0][s])
			}
			hues[s] = c.Session
			if listed[block] && !strings.Contains(where, "G2") {
				t.Fatalf("pass %d %s: block %q in two G1 slots", pass, where, name)
			}
			listed[block] = true
		}
		for i, c := range f.G1 {
			cell(fmt.Sprintf("G1 slot %d", i), c, snap.G1[i].Block, snap.G1[i].Owner)
		}
		for i, c := range f.G2 {
			cell(fmt.Sprintf("G2 entry %d", i), c, snap.G2[i].Block, -1)
		}
		seen := map[string]int32{}
		for _, c := range append(f.G1, f.G2...) {
			if c.Name < 0 {
				continue
			}
			if i, ok := seen[f.Str(c.Name)]; ok && i != c.Name {
				t.Fatalf("pass %d: block %q listed at %d and %d", pass, f.Str(c.Name), i, c.Name)
			}
			seen[f.Str(c.Name)] = c.Name
		}
	}
	t.Logf("%d passes, %d cells, %d sessions", n, cells, len(hues))
	if n < 150 || len(hues) < 2 {
		t.Errorf("%d passes, %d sessions: the test shows little", n, len(hues))
	}
}

// TestFrameDecodingRefusesBrokenFrames: a frame cut short anywhere, or
// with a byte too many, is refused with an error (the page shows it),
// never read past its end; the whole one decodes.
func TestFrameDecodingRefusesBrokenFrames(t *testing.T) {
	j := goldenJob(t, "connectors.yaml", goldenCases[2].sets)
	j.Passes = true
	p := indexAll(t, j.run(nil))
	bin, _, err := p.frame(0, 0, p.recs[0].NumPasses(0)/2)
	if err != nil {
		t.Fatal(err)
	}
	var f proto.Frame
	if err := proto.DecodeFrame(bin, &f); err != nil || len(f.Strings) == 0 {
		t.Fatalf("the frame: %v, %d names", err, len(f.Strings))
	}
	for n := range len(bin) {
		if err := proto.DecodeFrame(bin[:n], &f); err == nil {
			t.Fatalf("a frame cut to %d of its %d bytes decoded", n, len(bin))
		}
	}
	if err := proto.DecodeFrame(append(slices.Clip(bin), 0), &f); err == nil {
		t.Error("a frame with a byte too many decoded")
	}
}

// decodedFrame is the frame of rank 0's pass of p's first run, as the page
// decodes it.
func decodedFrame(t *testing.T, p *passes, pass int) (proto.Frame, *proto.FrameMeta) {
	t.Helper()
	bin, meta, err := p.frame(0, 0, pass)
	if err != nil {
		t.Fatal(err)
	}
	var f proto.Frame
	if err := proto.DecodeFrame(bin, &f); err != nil {
		t.Fatal(err)
	}
	return f, meta
}

// TestWarmAfterTheIndex: after the index of a single long run's window the
// worker's loop goes on with the warm-up of its checkpoints (index
// replies carrying Warm, "next" set until it is over), which ends with
// checkpoints kept; a window move near the end then runs from one of them
// and keeps the whole run's window. A compare's index has no warm-up.
func TestWarmAfterTheIndex(t *testing.T) {
	defer func(d time.Duration) { stepTime = d }(stepTime)
	stepTime = 2 * time.Millisecond // many steps from a short run
	j := goldenJob(t, "connectors.yaml", nil)
	j.Passes = true
	j.Overrides = []string{"traffic={source: {type: synthetic-session, new_input_tokens_per_turn: 16, output_tokens_per_turn: 2, session: {turns: 2}}, load: {type: concurrency, concurrency: 4}, stop: {sessions: 10000}}"}
	run := &proto.RunJob{Config: j.Config, Name: j.Name, Overrides: j.Overrides, Variants: j.Variants, Passes: true}
	ran := j.run(nil)[0].Record.RunPasses(0)
	j.FromPass = ran - 300
	whole := j.run(nil) // the window the move keeps, as the whole run keeps it
	r, a := roundTrip(t, proto.Request{Op: proto.OpRun, ID: 11, Run: run}, nil, nil)
	if r.Error != nil || r.Result == nil || !r.Result.Indexing || a.next != 11 {
		t.Fatalf("run: %+v, next %d", r, a.next)
	}
	indexed, steps, idle := false, 0, false
	var last *proto.WarmReply
	for next := 11; next == 11; steps++ {
		x, xa := roundTrip(t, proto.Request{Op: proto.OpIndex, ID: 11, Index: &proto.IndexJob{}}, nil, nil)
		if x.Error != nil || x.Index == nil || steps > 100_000 {
			t.Fatalf("step %d: %+v", steps, x)
		}
		if w := x.Index.Warm; w != nil {
			if !indexed {
				t.Fatalf("step %d: a warm-up step before the index ended", steps)
			}
			if xa.quiet == w.Done || xa.wait != 0 {
				t.Errorf("step %d: warm-up %+v posted to the page: %v, wait %d ms", steps, w, !xa.quiet, xa.wait)
			}
			last = w
		}
		if indexed && !idle && xa.next == 11 {
			// a seek holds the warm-up back: the next step only waits
			idle = true
			taken := scrub.cps[0].Taken
			roundTrip(t, proto.Request{Op: proto.OpSeek, ID: 13, Seek: &proto.SeekJob{Run: 11, Passes: []int{5}}}, nil, nil)
			y, ya := roundTrip(t, proto.Request{Op: proto.OpIndex, ID: 11, Index: &proto.IndexJob{}}, nil, nil)
			if y.Error != nil || !ya.quiet || ya.wait != WarmWaitMs || ya.next != 11 || scrub.cps[0].Taken != taken {
				t.Errorf("a warm-up step right after a seek: %+v, quiet %v, wait %d, next %d, %d snapshots taken after %d",
					y, ya.quiet, ya.wait, ya.next, scrub.cps[0].Taken, taken)
			}
			kept.seekAt = time.Time{}
		}
		indexed = indexed || x.Index.Done
		next = xa.next
	}
	if !idle {
		t.Error("no warm-up step to hold back")
	}
	if last == nil || !last.Done || last.Error != "" || last.Checkpoints < 1 {
		t.Fatalf("after %d steps the warm-up ended with %+v", steps, last)
	}
	t.Logf("%d passes on rank 0; index and warm-up in %d steps, %d checkpoints kept", ran, steps, last.Checkpoints)
	cps := scrub.cps[0]
	restored := cps.Restored
	movePassesOnly(t, j, j.Variants, ran-300, ran, whole)
	if scrub.cps[0] != cps || cps.Restored != restored+1 {
		t.Errorf("the move after the warm-up ran from %d snapshots of the same store (%v)", cps.Restored-restored, scrub.cps[0] == cps)
	}

	// A move while the warm-up is under way abandons it; the warm-up that
	// follows the move's index goes on to the end, and the moves keep the
	// whole run's windows.
	roundTrip(t, proto.Request{Op: proto.OpRun, ID: 14, Run: run}, nil, nil)
	for warming := false; !warming; {
		x, xa := roundTrip(t, proto.Request{Op: proto.OpIndex, ID: 14, Index: &proto.IndexJob{}}, nil, nil)
		if xa.next != 14 {
			t.Fatalf("the warm-up ended before a move could interrupt it: %+v", x.Index)
		}
		warming = x.Index != nil && x.Index.Warm != nil
	}
	movePassesOnly(t, j, j.Variants, ran-300, ran, whole)
	last, steps = nil, 0
	for next := 9; next == 9; steps++ { // movePassesOnly's run is request 9
		x, xa := roundTrip(t, proto.Request{Op: proto.OpIndex, ID: 9, Index: &proto.IndexJob{}}, nil, nil)
		if x.Error != nil || x.Index == nil || steps > 100_000 {
			t.Fatalf("after the move, step %d: %+v", steps, x)
		}
		if x.Index.Warm != nil {
			last = x.Index.Warm
		}
		next = xa.next
	}
	if last == nil || !last.Done || last.Checkpoints < 1 {
		t.Fatalf("the warm-up after a move ended with %+v", last)
	}
	restored = scrub.cps[0].Restored
	movePassesOnly(t, j, j.Variants, ran-300, ran, whole)
	if scrub.cps[0].Restored != restored+1 {
		t.Error("the move after the resumed warm-up did not run from a checkpoint")
	}

	j.Variants = append(j.Variants, proto.Variant{Label: "y", Sets: []string{"engine.workers.aggregated.kv_cache.host_offload.connector=offloading_v0_24"}})
	run.Variants = j.Variants
	roundTrip(t, proto.Request{Op: proto.OpRun, ID: 12, Run: run}, nil, nil)
	if kept.warm != nil {
		t.Error("a compare has a warm-up")
	}
}
