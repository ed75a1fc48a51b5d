package shard

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/sweep"
	"github.com/kvsim/kvsim/traces"
)

const testBuild = "test build"

// counts are the shard counts the byte-identity tests try: 1…7, or under
// wasm (whose test run is several times slower) 1…3, and only 3 for the
// conversation trace.
func counts(conversation bool) []int {
	switch {
	case runtime.GOOS != "js":
		return []int{1, 2, 3, 4, 5, 6, 7}
	case conversation:
		return []int{3}
	}
	return []int{1, 2, 3}
}

// defaultPlan is the default sweep: §A (docs/model/cases.md) over eight G2 sizes × 3 connectors.
func defaultPlan(t testing.TB) (*sweep.Plan, replay.Traces) {
	t.Helper()
	data, err := traces.Read(sweep.DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	return mustPlan(t, sweep.Spec{Name: "traces/" + sweep.DefaultConfig, Dir: ".", Data: data, Vary: sweep.DefaultVary}),
		replay.Traces{Builtin: true}
}

// conversationPlan is 250 requests of the Mooncake conversation trace over
// two G2 sizes × 3 connectors (6 points, so N = 7 has an empty shard).
func conversationPlan(t testing.TB) (*sweep.Plan, replay.Traces) {
	t.Helper()
	cfg, err := os.ReadFile("testdata/conversation-250.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := os.ReadFile("testdata/conversation-250.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return mustPlan(t, sweep.Spec{Name: "conversation-250.yaml", Dir: ".", Data: cfg, Vary: []string{
			"num_host_blocks=8000,32000", "connector=offloading_v0_24,offloading_v0_32,simple_cpu_v0_32"}}),
		replay.Traces{Texts: map[string][]byte{"conversation-250.jsonl": tr}}
}

func mustPlan(t testing.TB, spec sweep.Spec) *sweep.Plan {
	t.Helper()
	p, err := sweep.NewPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// shards runs every shard of n, through an encode and a decode.
func shards(t testing.TB, p *sweep.Plan, tr replay.Traces, n int) []Named {
	t.Helper()
	var out []Named
	for k := range n {
		f, err := Run(p, Shard{k, n}, testBuild, tr, sweep.Options{Parallel: 2})
		if err != nil {
			t.Fatal(err)
		}
		s := Shard{k, n}
		g, err := Decode(s.FileName(), f.Encode())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Named{s.FileName(), g})
	}
	return out
}

// TestMergeIsTheSweep: for the default sweep and a sweep over the
// conversation trace, N = 1…7 shards merged give sweep.csv and sweep.json
// byte-identical to the unsharded sweep.
func TestMergeIsTheSweep(t *testing.T) {
	for name, mk := range map[string]func(testing.TB) (*sweep.Plan, replay.Traces){
		"default": defaultPlan, "conversation": conversationPlan,
	} {
		t.Run(name, func(t *testing.T) {
			p, tr := mk(t)
			want, err := p.Run(tr, sweep.Options{Parallel: 2})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range counts(name == "conversation") {
				got, err := Merge(shards(t, p, tr, n))
				if err != nil {
					t.Fatalf("N=%d: %v", n, err)
				}
				if !bytes.Equal(got.CSV(), want.CSV()) || !bytes.Equal(got.JSON(), want.JSON()) {
					t.Errorf("N=%d: merged sweep.csv or sweep.json differs from the unsharded sweep", n)
				}
			}
		})
	}
}

// TestMergeRefuses: a missing shard, a shard of another grid, of another
// build or split, and a disagreeing duplicate are refused with messages
// that say what to do.
func TestMergeRefuses(t *testing.T) {
	p, tr := defaultPlan(t)
	four := shards(t, p, tr, 4)

	_, err := Merge([]Named{four[0], four[1], four[3]})
	owed := Points(four[0].File.Owners, 2)
	wantMissing := []string{
		"6 of 24 points are missing; re-run the shards that owe them:",
		"\n  shard 2/4 (shard-2-of-4.json, `kvsim sweep --shard 2/4`): " + p.Label(owed[0]) + ", ",
	}
	checkErr(t, "missing shard", err, wantMissing...)
	if len(owed) != 6 {
		t.Errorf("shard 2 of 4 owns %d of 24 points; want 6 (balanced by cost)", len(owed))
	}

	other := mustPlan(t, sweep.Spec{Name: p.Spec.Name, Dir: ".", Data: p.Spec.Data,
		Vary: []string{"num_host_blocks=64,128", "connector=offloading_v0_24,simple_cpu_v0_32"}})
	f, err := Run(other, Shard{1, 4}, testBuild, tr, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Merge([]Named{four[0], {"other/shard-1-of-4.json", f}, four[2], four[3]})
	checkErr(t, "other grid", err, "other/shard-1-of-4.json is a shard of a different sweep than shard-0-of-4.json: another grid: "+
		"--vary num_host_blocks=64,128 --vary connector=offloading_v0_24,simple_cpu_v0_32 vs "+
		"--vary "+sweep.DefaultVary[0]+" --vary "+sweep.DefaultVary[1]+" (sweep ")

	b := *four[1].File
	b.Build = "kvsim v0.0.0 go1.0"
	_, err = Merge([]Named{four[0], {"b/shard-1-of-4.json", &b}})
	checkErr(t, "other build", err, "b/shard-1-of-4.json was computed by another kvsim build (kvsim v0.0.0 go1.0) than shard-0-of-4.json (test build): run every shard with one build")

	three := shards(t, p, tr, 3)
	_, err = Merge([]Named{four[0], three[1]})
	checkErr(t, "other N", err, "shard-1-of-3.json is shard 1 of 3, but shard-0-of-4.json is shard 0 of 4: merge the shards of one --shard K/N split only")

	d := *four[1].File
	d.Points = append([]Point(nil), d.Points...)
	d.Points[0].Summary = []byte(strings.Replace(string(d.Points[0].Summary), `"num_requests":`, `"num_requests":1`, 1))
	_, err = Merge([]Named{four[0], four[1], {"again/shard-1-of-4.json", &d}, four[2], four[3]})
	checkErr(t, "disagreeing duplicate", err, p.Label(d.Points[0].Point)+" differs between shard-1-of-4.json and again/shard-1-of-4.json")

	// An agreeing duplicate (a shard run twice) is fine.
	if _, err := Merge([]Named{four[0], four[1], four[1], four[2], four[3]}); err != nil {
		t.Errorf("agreeing duplicate: %v", err)
	}
}

// TestMergeListsFailedPoints: a point that failed in its shard is listed
// with its error, and the merge fails.
func TestMergeListsFailedPoints(t *testing.T) {
	p, tr := defaultPlan(t)
	two := shards(t, p, tr, 2)
	f := *two[1].File
	f.Points = append([]Point(nil), f.Points...)
	f.Points[0].Summary, f.Points[0].Error = nil, p.Label(f.Points[0].Point)+": stalled"
	g, err := Decode("x", f.Encode())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Merge([]Named{two[0], {"x", g}})
	checkErr(t, "failed point", err, "1 of 24 points failed:\n  shard 1/2: "+p.Label(f.Points[0].Point)+": stalled")
}

func checkErr(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: merged; want an error", what)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error\n%s\nlacks\n%s", what, err, w)
		}
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		arg, index string
		set        bool
		want       Shard
		err        string
	}{
		{"2/4", "", false, Shard{2, 4}, ""},
		{"auto/4", "3", true, Shard{3, 4}, ""},
		{"auto/4", "", false, Shard{}, "--shard auto/4: JOB_COMPLETION_INDEX is not set (it is set in the pods of a Kubernetes Indexed Job); give K/N instead"},
		{"auto/4", "4", true, Shard{}, `--shard auto/4: JOB_COMPLETION_INDEX must be an integer from 0 to 3, got "4"`},
		{"auto/4", "x", true, Shard{}, `--shard auto/4: JOB_COMPLETION_INDEX must be an integer from 0 to 3, got "x"`},
		{"4/4", "", false, Shard{}, `--shard 4/4: K must be an integer from 0 to 3, got "4"`},
		{"-1/4", "", false, Shard{}, `K must be an integer from 0 to 3, got "-1"`},
		{"1/0", "", false, Shard{}, `--shard 1/0: N must be an integer from 1 to 65536, got "0"`},
		{"3", "", false, Shard{}, "--shard 3: expected K/N or auto/N (shard K of N, K from 0)"},
	} {
		got, err := Parse(c.arg, c.index, c.set)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q, %q): %v; want %q", c.arg, c.index, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Parse(%q, %q) = %v, %v; want %v", c.arg, c.index, got, err, c.want)
		}
	}
}

// TestAssign: longest first onto the least loaded shard; every point has
// one owner, and no shard's load exceeds the mean by more than the
// largest cost (the greedy bound).
func TestAssign(t *testing.T) {
	costs := []int64{5, 9, 1, 9, 3, 7, 2, 2}
	owner := Assign(costs, 3)
	// In cost order: 9 (point 1) → 0, 9 (3) → 1, 7 (5) → 2, 5 (0) → 2
	// (loads 9 9 7), 3 (4) → 0, 2 (6) → 1, 2 (7) → 1 (loads 12 11 12),
	// 1 (2) → 0.
	load := make([]int64, 3)
	for i, o := range owner {
		load[o] += costs[i]
	}
	if got := []int{owner[1], owner[3], owner[5], owner[0], owner[4], owner[6], owner[7], owner[2]}; !equalInts(got, []int{0, 1, 2, 2, 0, 1, 1, 0}) {
		t.Errorf("owners in cost order %v", got)
	}
	if load[0] != 13 || load[1] != 13 || load[2] != 12 {
		t.Errorf("loads %v; want [13 13 12]", load)
	}
}
