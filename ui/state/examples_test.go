package state

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/wasm/proto"
)

// exampleRun replays an example's config with extra --set edits.
func exampleRun(t *testing.T, id string, sets ...string) *replay.Output {
	t.Helper()
	ex := ExampleByID(id)
	if ex == nil {
		t.Fatalf("no example %q", id)
	}
	res, err := replay.Run(replay.Job{Name: ex.Config, Dir: ".", Config: []byte(ex.YAML()), Sets: sets,
		Traces: replay.Traces{Builtin: true}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

const aggHost = "engine.workers.aggregated.kv_cache.host_offload"

// connectorRun is an §A (docs/model/cases.md) example's run with another connector and G2 size.
func connectorRun(t *testing.T, id, connector string, blocks int) *replay.Output {
	return exampleRun(t, id, aggHost+".connector="+connector, aggHost+".num_host_blocks="+strconv.Itoa(blocks))
}

func restoredTokens(res *replay.Output) int64 {
	var n int64
	for _, r := range res.Records {
		n += int64(r.FirstHost)
	}
	return n
}

// lostAt192 is how many fewer tokens connector restores in the §A
// example at 192 host blocks than with 2,048, where nothing is evicted.
func lostAt192(t *testing.T, connector string) int64 {
	return restoredTokens(connectorRun(t, "A192", connector, 2048)) - restoredTokens(connectorRun(t, "A192", connector, 192))
}

// nothingOr writes a count as the texts do: "nothing" for none.
func nothingOr(n int64, unit string) string {
	if n == 0 {
		return "nothing"
	}
	return Thousands(n) + unit
}

// restoreRequest is the §B examples' "restore" request.
func restoreRequest(t *testing.T, res *replay.Output) (host int, waitMs float64) {
	for _, r := range res.Records {
		if r.RequestID == "restore" {
			return r.FirstHost, float64(r.FirstAdmitMs - r.ArrivalMs)
		}
	}
	t.Fatal("no request named restore")
	return 0, 0
}

// TestExampleTextsQuoteNoRunFigure: the examples' fixed sentences quote
// no figure a run computes (those are in Explain's paragraph): none of the
// figures the texts used to hard-code is left in them.
func TestExampleTextsQuoteNoRunFigure(t *testing.T) {
	for _, ex := range Examples {
		text := strings.Join(ex.Text, " ")
		for _, old := range []string{"2,656", "3,136", "1,424", "81 answer", "8 tokens", "2 ms later"} {
			if strings.Contains(text, old) {
				t.Errorf("%s quotes %q", ex.ID, old)
			}
		}
	}
}

// viewOf is what the bridge shows of a run, as far as Explain reads it.
func viewOf(res *replay.Output) *proto.View {
	v := &proto.View{Restored: restoredTokens(res)}
	for _, r := range res.Records {
		row := proto.Row{ID: r.RequestID, Input: r.InputLength, G1: r.FirstG1, Host: r.FirstHost, Recomputed: r.InputLength - r.FirstReused, TTFT: -1}
		if r.Tokens >= 1 {
			row.TTFT = float64(r.FirstTokenMs - r.ArrivalMs)
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// TestExampleExplanationsComeFromTheRuns: each guided example's closing
// paragraph, built from its runs (replayed natively here, diffed as the
// worker diffs them), quotes the runs' own figures, and another run gives
// another paragraph.
func TestExampleExplanationsComeFromTheRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("replays every example")
	}
	for _, id := range []string{"A192", "A2048"} {
		ex := ExampleByID(id)
		blocks := 192
		if id == "A2048" {
			blocks = 2048
		}
		var runs []Run
		var views []*proto.View
		var recs []*replay.Output
		for _, c := range ex.Compare.Values {
			res := exampleRunWith(t, id, true, aggHost+".connector="+c, aggHost+".num_host_blocks="+strconv.Itoa(blocks))
			recs = append(recs, res)
			runs = append(runs, Run{Label: ConnectorLabel(c), Short: ConnectorLabel(c)})
			views = append(views, viewOf(res))
		}
		var divs []proto.Divergence
		for v := 1; v < len(recs); v++ {
			d, err := record.Diff(recs[0].Record, recs[v].Record, 0)
			if err != nil {
				t.Fatal(err)
			}
			divs = append(divs, proto.Divergence{Run: v, Pass: d.FirstDivergent, RestoresOnlyFirst: len(d.OnlyA), RestoresOnlyThis: len(d.OnlyB), BlockSize: d.BlockSize})
		}
		got := ex.Explain(runs, views, divs)
		for i, v := range views {
			if want := runs[i].Short + " " + Thousands(v.Restored); !strings.Contains(got, want) {
				t.Errorf("%s: %q lacks %q", id, got, want)
			}
		}
		for _, d := range divs {
			if want := fmt.Sprintf("at pass %d", d.Pass); d.Pass > 0 && !strings.Contains(got, want) {
				t.Errorf("%s: %q lacks %q", id, got, want)
			}
			n := max(d.RestoresOnlyThis, d.RestoresOnlyFirst)
			if want := BlockTokens(n, d.BlockSize); n > 0 && !strings.Contains(got, want) {
				t.Errorf("%s: %q lacks %q", id, got, want)
			}
		}
		t.Logf("%s: %s", id, got)
	}
	for _, id := range []string{"B", "BPD"} {
		res := exampleRun(t, id)
		host, _ := restoreRequest(t, res)
		got := ExampleByID(id).Explain([]Run{{}}, []*proto.View{viewOf(res)}, nil)
		if want := fmt.Sprintf("reuses %s of its", Thousands(int64(host))); host == 0 || !strings.Contains(got, want) {
			t.Errorf("%s: %q lacks %q", id, got, want)
		}
		t.Logf("%s: %s", id, got)
	}
}

// exampleRunWith is exampleRun, with the per-pass record when passes is set.
func exampleRunWith(t *testing.T, id string, passes bool, sets ...string) *replay.Output {
	t.Helper()
	ex := ExampleByID(id)
	res, err := replay.Run(replay.Job{Name: ex.Config, Dir: ".", Config: []byte(ex.YAML()), Sets: sets,
		Traces: replay.Traces{Builtin: true}, Capture: replay.Capture{Passes: passes}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestExampleTextsMatchTheirRuns replays what the R4 example's text quotes
// (its routing figures) and checks every quoted figure against the runs.
// The other examples quote no run figure in their fixed sentences
// (TestExampleTextsQuoteNoRunFigure); their closing paragraphs come from
// the runs on the page (TestExampleExplanationsComeFromTheRuns).
func TestExampleTextsMatchTheirRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("replays every example")
	}
	var tests []struct {
		example string
		phrase  string
		figure  func(t *testing.T) string
	}
	for _, policy := range []string{"round_robin", "kv_router"} {
		run := func(t *testing.T) *replay.Output { return exampleRun(t, "R4", "engine.routing="+policy) }
		verb := map[string]string{"round_robin": "it reuses %s of the input", "kv_router": "it reuses %s, recomputes"}[policy]
		tests = append(tests, []struct {
			example string
			phrase  string
			figure  func(t *testing.T) string
		}{
			{"R4", verb, func(t *testing.T) string {
				return strconv.FormatFloat(run(t).Summary.PrefixCacheReusedRatio, 'f', 4, 64)
			}},
			{"R4", "recomputes %s tokens" + map[string]string{"round_robin": ".", "kv_router": ", and"}[policy], func(t *testing.T) string {
				return Thousands(run(t).Summary.CommittedPrefillTokens)
			}},
			{"R4", map[string]string{"round_robin": "TTFT falls from %s ms", "kv_router": "ms to %s ms"}[policy], func(t *testing.T) string {
				return strconv.FormatFloat(run(t).Summary.TTFT.Mean, 'f', 2, 64)
			}},
		}...)
	}
	for _, tt := range tests {
		t.Run(tt.example+"/"+tt.phrase, func(t *testing.T) {
			want := strings.Replace(tt.phrase, "%s", tt.figure(t), 1)
			text := strings.Join(ExampleByID(tt.example).Text, " ")
			if !strings.Contains(text, want) {
				t.Errorf("the runs say %q; the example says:\n%s", want, text)
			}
		})
	}
}
