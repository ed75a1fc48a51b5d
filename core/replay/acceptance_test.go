package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/trace"
	"github.com/kvsim/kvsim/core/vtime"
	"github.com/kvsim/kvsim/traces"
)

const hostOffload = "engine.workers.aggregated.kv_cache.host_offload"

// connectorRows are docs/model/cases.md ("Case A: connector comparison"):
// restored and recomputed tokens per CPU tier and connector.
var connectorRows = []struct {
	name                 string
	blocks               int // 0: no host_offload
	connector            string
	restored, recomputed int64
}{
	{"none", 0, "", 0, 20320},
	{"2048-offloading_v0_24", 2048, "offloading_v0_24", 14144, 6544},
	{"2048-offloading_v0_32", 2048, "offloading_v0_32", 14144, 6544},
	{"2048-simple_cpu_v0_32", 2048, "simple_cpu_v0_32", 15568, 5248},
	{"192-offloading_v0_24", 192, "offloading_v0_24", 11488, 8800},
	{"192-offloading_v0_32", 192, "offloading_v0_32", 14144, 6544},
	{"192-simple_cpu_v0_32", 192, "simple_cpu_v0_32", 12432, 8368},
}

func connectorSets(blocks int, connector string) []string {
	if blocks == 0 {
		return []string{hostOffload + "=null"}
	}
	return []string{fmt.Sprintf("%s.num_host_blocks=%d", hostOffload, blocks), hostOffload + ".connector=" + connector}
}

// generatedOpener serves the §A trace from the generator, and every other
// file from the shipped examples.
func generatedOpener(t testing.TB) Opener {
	var gen bytes.Buffer
	if err := trace.WriteConnectorsTrace(&gen, trace.ConnectorsTraceDefault()); err != nil {
		t.Fatal(err)
	}
	return func(p string) (io.ReadCloser, error) {
		if p == "delta-sessions.jsonl" {
			return io.NopCloser(bytes.NewReader(gen.Bytes())), nil
		}
		return traces.Open(p)
	}
}

func runExample(t testing.TB, name string, sets []string, open Opener) *Result {
	t.Helper()
	data, err := traces.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(name, ".", data, sets)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := Workload(cfg, open)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunWith(cfg, wl, engine.Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func restored(res *Result) int64 {
	var n int64
	for _, r := range res.Records {
		n += int64(r.FirstHost)
	}
	return n
}

// TestConnectorComparison is
// docs/model/cases.md ("Case A: connector comparison"): all seven rows
// from the real config file and the generated trace, each request also checked
// against the reference model's per-request times and reuse.
func TestConnectorComparison(t *testing.T) {
	open := generatedOpener(t)
	for _, row := range connectorRows {
		t.Run(row.name, func(t *testing.T) {
			res := runExample(t, "connectors.yaml", connectorSets(row.blocks, row.connector), open)
			if got := res.Summary.CompletedRequests; got != 48 {
				t.Errorf("completed %d; want 48", got)
			}
			if got := res.Summary.TotalInputTokens; got != 27648 {
				t.Errorf("prompt tokens %d; want 27,648", got)
			}
			if got := restored(res); got != row.restored {
				t.Errorf("restored %d; want %d", got, row.restored)
			}
			if got := res.Summary.CommittedPrefillTokens; got != row.recomputed {
				t.Errorf("recomputed %d; want %d", got, row.recomputed)
			}
			compareReference(t, res, "testdata/reference/connectors-"+refName(row.blocks, row.connector)+".jsonl")
		})
	}
}

func refName(blocks int, connector string) string {
	if blocks == 0 {
		return "none"
	}
	return fmt.Sprintf("%d-%s", blocks, connector)
}

// compareReference checks every request against the independent model's
// per-request reference
// (docs/model/cases.md ("Case A: connector comparison")).
func compareReference(t *testing.T, res *Result, file string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byID := map[string]int{}
	for i, r := range res.Records {
		byID[r.RequestID] = i
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ref struct {
			RequestID                            string `json:"request_id"`
			Arrival, FirstAdmit, FirstToken, End float64
			G1                                   *int       `json:"first_admission_g1_reused_input_tokens"`
			Host                                 *int       `json:"first_admission_host_reused_input_tokens"`
			A                                    vtime.Time `json:"arrival_time_ms"`
			F                                    vtime.Time `json:"first_admit_ms"`
			T                                    vtime.Time `json:"first_token_ms"`
			E                                    vtime.Time `json:"terminal_time_ms"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ref); err != nil {
			t.Fatal(err)
		}
		r := res.Records[byID[ref.RequestID]]
		got := []vtime.Time{r.ArrivalMs, r.FirstAdmitMs, r.FirstTokenMs, r.TerminalMs}
		want := []vtime.Time{ref.A, ref.F, ref.T, ref.E}
		for k := range got {
			if math.Abs(float64(got[k]-want[k])) > 1e-9 {
				t.Fatalf("%s: arrival/admit/first token/end = %v; reference %v", ref.RequestID, got, want)
			}
		}
		if ref.Host != nil && (r.FirstHost != *ref.Host || r.FirstG1 != *ref.G1) {
			t.Fatalf("%s: g1/host = %d/%d; reference %d/%d", ref.RequestID, r.FirstG1, r.FirstHost, *ref.G1, *ref.Host)
		}
	}
}

// TestNoTierHitTable is
// docs/model/cases.md ("Case A: connector comparison") row 1's per-turn
// G1 hit table.
func TestNoTierHitTable(t *testing.T) {
	res := runExample(t, "connectors.yaml", connectorSets(0, ""), generatedOpener(t))
	hits := [6][4]int{{0, 0, 0, 0}, {19, 19, 19, 19}, {27, 27, 27, 26}, {21, 18, 5, 2}, {0, 0, 0, 0}, {0, 0, 0, 0}}
	for _, r := range res.Records {
		var s, turn int
		fmt.Sscanf(r.RequestID, "s%dt%d", &s, &turn)
		want := hits[turn][s%4]
		if got := r.FirstReused / 16; got != want {
			t.Errorf("%s: %d G1 hit blocks; want %d", r.RequestID, got, want)
		}
		if got, want := r.InputLength-r.FirstReused, r.InputLength-want*16; got != want {
			t.Errorf("%s: recomputed %d; want %d", r.RequestID, got, want)
		}
	}
}

// TestG2Restore is docs/model/cases.md ("Case B: restore from G2").
func TestG2Restore(t *testing.T) {
	for _, c := range []struct {
		name      string
		sets      []string
		committed int64
		wait      vtime.Time
	}{
		{"1GBps", nil, 28, 2},
		{"0.1GBps", []string{hostOffload + ".h2d_bandwidth_gbps=0.1"}, 28, 20},
		{"without G2", []string{hostOffload + "=null"}, 36, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := runExample(t, "g2-restore.yaml", c.sets, traces.Open)
			if got := res.Summary.CompletedRequests; got != 4 {
				t.Errorf("completed %d; want 4", got)
			}
			if got := res.Summary.CommittedPrefillTokens; got != c.committed {
				t.Errorf("committed_prefill_tokens %d; want %d", got, c.committed)
			}
			for _, r := range res.Records {
				if r.RequestID != "restore" {
					if r.FirstHost != 0 {
						t.Errorf("%s restored %d tokens; want 0", r.RequestID, r.FirstHost)
					}
					continue
				}
				wantHost := 8
				if c.sets != nil && c.committed == 36 {
					wantHost = 0
				}
				if r.FirstHost != wantHost || r.FirstG1 != 0 {
					t.Errorf("restore: host %d g1 %d; want %d and 0", r.FirstHost, r.FirstG1, wantHost)
				}
				if got := r.FirstAdmitMs - r.ArrivalMs; got != c.wait {
					t.Errorf("restore waited %v ms; want %v", got, c.wait)
				}
				if got := r.FirstTokenMs - r.ArrivalMs; got != c.wait+2 {
					t.Errorf("restore TTFT %v; want %v", got, c.wait+2)
				}
			}
		})
	}
}

// TestSharedPoolDomain is docs/model/cases.md ("Case B: restore from G2")
// with scope cluster_shared.
func TestSharedPoolDomain(t *testing.T) {
	res := runExample(t, "g2-restore.yaml", []string{hostOffload + ".scope=cluster_shared"}, traces.Open)
	if d := res.Summary.Domains; len(d) != 1 || d[0].CapacityBlocks != 8 {
		t.Fatalf("g2_domains %+v; want one pool of capacity 8", d)
	}
	if got := restored(res); got != 8 {
		t.Errorf("restored %d; want 8", got)
	}
	if !bytes.Contains(res.PredictionJSON(), []byte(`"g2_domains": [{"capacity_blocks": 8`)) {
		t.Errorf("prediction.json lacks g2_domains: %s", res.PredictionJSON())
	}
}

// TestDeterminism: two runs give byte-identical reports.
func TestDeterminism(t *testing.T) {
	open := generatedOpener(t)
	for _, row := range connectorRows {
		a := runExample(t, "connectors.yaml", connectorSets(row.blocks, row.connector), open)
		b := runExample(t, "connectors.yaml", connectorSets(row.blocks, row.connector), open)
		if !bytes.Equal(a.PredictionJSON(), b.PredictionJSON()) || !bytes.Equal(a.RequestsJSONL(), b.RequestsJSONL()) {
			t.Errorf("%s: two runs differ", row.name)
		}
	}
}
