package record_test

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/record"
)

func TestParseWindow(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		spec     string
		time     bool
		from, to float64
		err      string
	}{
		{spec: "300:500", from: 300, to: 500},
		{spec: "7:7", from: 7, to: 7},
		{spec: "5000:", from: 5000, to: inf},
		{spec: ":20", from: -inf, to: 20},
		{spec: "120s:130s", time: true, from: 120000, to: 130000},
		{spec: "1500ms:2.5s", time: true, from: 1500, to: 2500},
		{spec: ":90s", time: true, from: -inf, to: 90000},
		{spec: "0ms:", time: true, from: 0, to: inf},
		{spec: "300", err: `window "300": no ':'`},
		{spec: ":", err: "both ends are left out"},
		{spec: "0:5", err: `"0" is neither a pass number`},
		{spec: "5:4", err: "it ends before it starts"},
		{spec: "10:20s", err: "one end is a pass number and the other a time"},
		{spec: "-1s:2s", err: `"-1s" is not a time of 0 or more`},
		{spec: "a:b", err: `"a" is neither a pass number (1 or more) nor a time with a unit (s, ms)`},
	} {
		w, err := record.ParseWindow(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v; want one containing %q", tc.spec, err, tc.err)
			} else if !strings.Contains(err.Error(), "want A:B") {
				t.Errorf("%q: error %q does not say the syntax", tc.spec, err)
			}
			continue
		}
		if err != nil || w.Time != tc.time || w.From != tc.from || w.To != tc.to || w.Spec != tc.spec {
			t.Errorf("%q: %+v, %v; want time %v from %v to %v", tc.spec, w, err, tc.time, tc.from, tc.to)
		}
	}
}

// passLine is what a test reads of a passes.jsonl line.
type passLine struct {
	Pass, Worker, Rank int
	StartMs            float64 `json:"start_ms"`
	EndMs              float64 `json:"end_ms"`
	Base               bool
	Window             string
	NewBlocks          [][2]string `json:"new_blocks"`
}

func lines(t *testing.T, b []byte) ([][]byte, []passLine) {
	t.Helper()
	raw := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	out := make([]passLine, len(raw))
	for i, l := range raw {
		if err := json.Unmarshal(l, &out[i]); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	return raw, out
}

// withoutNames is a passes.jsonl line without the names it gives
// (new_blocks, new_requests), which a windowed file gives where it first
// uses them rather than where the run first did.
func withoutNames(t *testing.T, l []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(l, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "new_blocks")
	delete(m, "new_requests")
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWindowedRecordIsTheFullRecordCut: a windowed passes.jsonl is a base
// line then the full record's lines of the window, byte for byte but for
// the names they give (one rank, so no left-out line falls between two
// kept ones), and its decoded record seeks to the full record's snapshots
// at every pass of the window.
func TestWindowedRecordIsTheFullRecordCut(t *testing.T) {
	for _, row := range []int{0, 4, 6} {
		rec, _, _ := run(t, "connectors.yaml", connectorRows[row].sets, false)
		var full bytes.Buffer
		if err := rec.WriteJSONL(&full); err != nil {
			t.Fatal(err)
		}
		fullRaw, fullLines := lines(t, full.Bytes())
		for _, spec := range []string{"300:500", "1:40", "650:", "1s:1.5s", ":500ms"} {
			t.Run(connectorRows[row].name+"/"+spec, func(t *testing.T) {
				win, err := record.ParseWindow(spec)
				if err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				if err := rec.WriteWindow(&b, win); err != nil {
					t.Fatal(err)
				}
				raw, got := lines(t, b.Bytes())
				if !got[0].Base || got[0].Window != spec {
					t.Fatalf("first line %s is not a base line naming the window", raw[0])
				}
				var want [][]byte
				for i, l := range fullLines {
					in := float64(l.Pass) >= win.From && float64(l.Pass) <= win.To
					if win.Time {
						in = l.EndMs >= win.From && l.StartMs <= win.To
					}
					if in {
						want = append(want, fullRaw[i])
					}
				}
				if len(want) == 0 || len(want) == len(fullLines) {
					t.Fatalf("window %s keeps %d of %d lines; the test wants a proper part", spec, len(want), len(fullLines))
				}
				if len(raw)-1 != len(want) {
					t.Fatalf("%d lines after the base line; the full record has %d in the window", len(raw)-1, len(want))
				}
				for i := range want {
					if g, w := withoutNames(t, raw[i+1]), withoutNames(t, want[i]); !bytes.Equal(g, w) {
						t.Fatalf("line %d differs from the full record's (names aside):\n%s\nwant\n%s", i+2, g, w)
					}
				}
				dec, err := record.Decode(bytes.NewReader(b.Bytes()))
				if err != nil {
					t.Fatal(err)
				}
				if dec.Windowed() != spec || dec.FirstPass(0) != got[1].Pass || dec.NumLines(0) != got[len(got)-1].Pass {
					t.Fatalf("decoded: window %q, passes %d to %d; want %q, %d to %d", dec.Windowed(), dec.FirstPass(0),
						dec.NumLines(0), spec, got[1].Pass, got[len(got)-1].Pass)
				}
				for p := dec.FirstPass(0); p <= dec.NumLines(0); p++ {
					a, _ := rec.Seek(0, p)
					d, err := dec.Seek(0, p)
					if err != nil {
						t.Fatal(err)
					}
					if !sameSnapshot(rec, a, dec, d) {
						t.Fatalf("pass %d: the windowed record's snapshot differs from the full one's", p)
					}
				}
				if p := dec.FirstPass(0) - 1; p >= 1 {
					if _, err := dec.Seek(0, p); err == nil || !strings.Contains(err.Error(), "before the window") {
						t.Errorf("Seek before the window: %v", err)
					}
				}
				if err := dec.WriteJSONL(&bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "keeps only the window "+spec) {
					t.Errorf("writing a windowed record whole: %v", err)
				}
			})
		}
	}
}

// TestWindowedRecordOfRanksSharingG2: two DP ranks share one G2 pool;
// lines of one rank left out of a window between kept lines of the other
// change names and G2 operations, which the kept lines then carry, so the
// decoded record still seeks to the full record's states.
func TestWindowedRecordOfRanksSharingG2(t *testing.T) {
	rec, _, _ := run(t, "connectors.yaml", []string{"engine.workers.aggregated.parallelism.attention_data=2",
		hostOffload + ".scope=cluster_shared", hostOffload + ".num_host_blocks=192", hostOffload + ".connector=offloading_v0_24"}, false)
	if len(rec.Ranks) != 2 {
		t.Fatalf("%d ranks; want 2", len(rec.Ranks))
	}
	for _, spec := range []string{"100:300", "1s:2s"} {
		win, _ := record.ParseWindow(spec)
		var b bytes.Buffer
		if err := rec.WriteWindow(&b, win); err != nil {
			t.Fatal(err)
		}
		dec, err := record.Decode(&b)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		for rank := range rec.Ranks {
			ri := dec.RankIndex(rec.Ranks[rank].Worker, rec.Ranks[rank].Rank)
			for p := dec.FirstPass(ri); p <= dec.NumLines(ri); p++ {
				a, _ := rec.Seek(rank, p)
				d, err := dec.Seek(ri, p)
				if err != nil {
					t.Fatal(err)
				}
				if !sameSnapshot(rec, a, dec, d) {
					t.Fatalf("%s: rank %d pass %d: the windowed record's snapshot differs from the full one's", spec, rank, p)
				}
			}
		}
		d, err := record.Diff(dec, dec, 0)
		if err != nil || d.FirstDivergent != 0 {
			t.Errorf("%s: a windowed record against itself: %+v, %v", spec, d, err)
		}
		if _, err := record.Diff(dec, rec, 0); err == nil || !strings.Contains(err.Error(), "start at different passes") {
			t.Errorf("%s: a windowed record against the full one: %v", spec, err)
		}
	}
	win, _ := record.ParseWindow("40s:")
	err := rec.WriteWindow(&bytes.Buffer{}, win)
	if want := "the window 40s: holds no pass of the run"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("an empty window: %v; want %q", err, want)
	}
}

// runWindow runs example twice, as replay does for a windowed capture: with
// a Locator, then with a recorder that stores only the passes it found.
func runWindow(t *testing.T, example string, sets []string, win record.Window) *record.Record {
	return runWindowWith(t, example, sets, win, true)
}

// runWindowWith is runWindow; without locate, the recorder gets no ranges
// (a pass window's own pass numbers) and the first run is left out.
func runWindowWith(t *testing.T, example string, sets []string, win record.Window, locate bool) *record.Record {
	t.Helper()
	var ranges []record.PassRange
	if locate {
		loc := record.NewLocator(win)
		if err := newEngine(t, example, sets, loc).Run(); err != nil {
			t.Fatal(err)
		}
		ranges = loc.Ranges()
	}
	rr := record.NewWindowRecorder(win, ranges)
	if err := newEngine(t, example, sets, rr).Run(); err != nil {
		t.Fatal(err)
	}
	return rr.Record()
}

// blockName matches a block's name in a passes.jsonl line ("s0t4#48").
var blockName = regexp.MustCompile(`"([^"]+#[0-9]+)"`)

// TestWindowRecorderWritesTheWindowedFile: a recorder that stores only a
// window's passes writes the same passes.jsonl, byte for byte, as the
// whole record cut to that window (for a pass window also without the
// Locator's ranges), seeks to the same snapshots, stores a
// fraction of the whole record's changes, and every block name a line of
// the file uses was given by that line or an earlier one.
func TestWindowRecorderWritesTheWindowedFile(t *testing.T) {
	shared := []string{"engine.workers.aggregated.parallelism.attention_data=2",
		hostOffload + ".scope=cluster_shared", hostOffload + ".num_host_blocks=192", hostOffload + ".connector=offloading_v0_24"}
	cases := []struct {
		name  string
		sets  []string
		specs []string
	}{
		{connectorRows[0].name, connectorRows[0].sets, []string{"300:500", "1:40", "650:", "1s:1.5s", ":500ms", "700ms:"}},
		{connectorRows[4].name, connectorRows[4].sets, []string{"300:500", "650:", "1s:1.5s"}},
		{connectorRows[6].name, connectorRows[6].sets, []string{"300:500", "1s:1.5s", "1:1"}},
		{"two ranks sharing G2", shared, []string{"100:300", "1s:2s", "250:"}},
	}
	for _, c := range cases {
		full, _, _ := run(t, "connectors.yaml", c.sets, false)
		for _, spec := range c.specs {
			t.Run(c.name+"/"+spec, func(t *testing.T) {
				win, err := record.ParseWindow(spec)
				if err != nil {
					t.Fatal(err)
				}
				var want, got bytes.Buffer
				if err := full.WriteWindow(&want, win); err != nil {
					t.Fatal(err)
				}
				rec := runWindow(t, "connectors.yaml", c.sets, win)
				if err := rec.WriteWindow(&got, win); err != nil {
					t.Fatal(err)
				}
				for k := range full.Ranks {
					if rec.RunPasses(k) != full.NumPasses(k) {
						t.Errorf("rank %d: the windowed record says the rank ran %d passes; it ran %d", k, rec.RunPasses(k), full.NumPasses(k))
					}
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					g, w := bytes.Split(got.Bytes(), []byte("\n")), bytes.Split(want.Bytes(), []byte("\n"))
					for i := range min(len(g), len(w)) {
						if !bytes.Equal(g[i], w[i]) {
							t.Fatalf("line %d of %d (want %d) differs:\n%s\nwant\n%s", i+1, len(g), len(w), g[i], w[i])
						}
					}
					t.Fatalf("%d lines, want %d", len(g), len(w))
				}
				if !win.Time {
					var own bytes.Buffer
					if err := runWindowWith(t, "connectors.yaml", c.sets, win, false).WriteWindow(&own, win); err != nil || !bytes.Equal(own.Bytes(), want.Bytes()) {
						t.Fatalf("without the Locator's ranges the file differs (%v)", err)
					}
				}
				for rank := range full.Ranks {
					for p := rec.FirstPass(rank); p <= rec.NumLines(rank); p++ {
						a, _ := full.Seek(rank, p)
						b, err := rec.Seek(rank, p)
						if err != nil {
							t.Fatal(err)
						}
						if !sameSnapshot(full, a, rec, b) {
							t.Fatalf("rank %d pass %d: the window recorder's snapshot differs from the full one's", rank, p)
						}
					}
				}
				if fs, ws := full.Stats(), rec.Stats(); ws.Changes >= fs.Changes && spec != "1:40" {
					t.Errorf("the window recorder stored %d changes; the whole record has %d", ws.Changes, fs.Changes)
				}
				given := map[string]bool{}
				raw, ls := lines(t, got.Bytes())
				for i, l := range ls {
					for _, nb := range l.NewBlocks {
						given[nb[0]] = true
					}
					for _, m := range blockName.FindAllSubmatch(raw[i], -1) {
						if !given[string(m[1])] {
							t.Fatalf("line %d uses block %s before the file gives it", i+1, m[1])
						}
					}
				}
			})
		}
	}
	win, _ := record.ParseWindow("40s:")
	rec := runWindow(t, "connectors.yaml", cases[3].sets, win)
	err := rec.WriteWindow(&bytes.Buffer{}, win)
	if want := "the window 40s: holds no pass of the run"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("an empty window: %v; want %q", err, want)
	}
}
