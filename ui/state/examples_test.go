package state

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/replay"
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

// connectorRun is an §A example's run with another connector and G2 size.
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

// TestExampleTextsMatchTheirRuns replays what each guided example's
// explanation quotes and checks every quoted figure against the runs, so a
// model change that moves one fails here instead of leaving the page
// explaining numbers it no longer shows.
func TestExampleTextsMatchTheirRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("replays every example")
	}
	tests := []struct {
		example string
		phrase  string // as the text says it, %s for the figure
		figure  func(t *testing.T) string
	}{
		{"A192", "offloading v0.32 loses %s", func(t *testing.T) string {
			return nothingOr(lostAt192(t, "offloading_v0_32"), " restored tokens")
		}},
		{"A192", "v0.24 loses %s restored tokens", func(t *testing.T) string {
			return Thousands(lostAt192(t, "offloading_v0_24"))
		}},
		{"A192", "evicting first in first out, loses %s.", func(t *testing.T) string {
			return Thousands(lostAt192(t, "simple_cpu_v0_32"))
		}},
		{"B", "brings %s tokens back", func(t *testing.T) string {
			host, _ := restoreRequest(t, exampleRun(t, "B"))
			return Thousands(int64(host))
		}},
		{"B", "Its first token comes %s ms later than a G1 hit would", func(t *testing.T) string {
			_, wait := restoreRequest(t, exampleRun(t, "B"))
			return Ms(wait)
		}},
		{"BPD", "one G2 pool of %s blocks", func(t *testing.T) string {
			d := exampleRun(t, "BPD").Summary.Domains
			if len(d) != 1 {
				t.Fatalf("%d G2 domains; want 1", len(d))
			}
			return Thousands(int64(d[0].CapacityBlocks))
		}},
		{"BPD", "loads its %s tokens back", func(t *testing.T) string {
			host, _ := restoreRequest(t, exampleRun(t, "BPD"))
			return Thousands(int64(host))
		}},
		{"A2048", "With a 2,048-block tier %s is evicted from G2", func(t *testing.T) string {
			var n int64
			for _, c := range []string{"offloading_v0_32", "simple_cpu_v0_32"} {
				n += connectorRun(t, "A2048", c, 2048).Summary.G2.Evictions
			}
			return nothingOr(n, " blocks")
		}},
		{"A2048", "SimpleCPU restores %s more tokens than offloading v0.32", func(t *testing.T) string {
			return Thousands(restoredTokens(connectorRun(t, "A2048", "simple_cpu_v0_32", 2048)) - restoredTokens(connectorRun(t, "A2048", "offloading_v0_32", 2048)))
		}},
		{"A2048", "recompute the %s answer blocks", func(t *testing.T) string {
			// The tokens SimpleCPU does not recompute, in whole blocks.
			v032 := connectorRun(t, "A2048", "offloading_v0_32", 2048)
			saved := v032.Summary.CommittedPrefillTokens -
				connectorRun(t, "A2048", "simple_cpu_v0_32", 2048).Summary.CommittedPrefillTokens
			bs := int64(v032.Config.Roles()[0].KVCache.BlockSize)
			if saved%bs != 0 {
				t.Fatalf("SimpleCPU recomputes %d fewer tokens: not whole blocks of %d", saved, bs)
			}
			return Thousands(saved / bs)
		}},
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
