package replay

import (
	"bytes"
	"io"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/traces"
)

// TestDeferredCompletionsChangeNothing: the engine lets the completions of
// a rank that holds nothing wait for its next event (engine.nextEvent).
// Every §A (docs/model/cases.md) row, the shipped G2 examples and a 120-session §E-shaped run give
// the same prediction.json, requests.jsonl and passes.jsonl, byte for
// byte, as a run that wakes for each completion.
func TestDeferredCompletionsChangeNothing(t *testing.T) {
	open := generatedOpener(t)
	type example struct {
		name, file string
		sets       []string
		open       Opener
	}
	var cases []example
	for _, row := range connectorRows {
		cases = append(cases, example{"A/" + row.name, "connectors.yaml", connectorSets(row.blocks, row.connector), open})
	}
	cases = append(cases,
		example{"g2-restore", "g2-restore.yaml", nil, open},
		example{"g2-restore-pd", "g2-restore-pd.yaml", nil, open},
		example{"agentic-g2", "agentic-g2.yaml", nil, open})
	e120 := connectorsTrace(t, 120)
	openE120 := func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(e120)), nil }
	for _, c := range []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"} {
		cases = append(cases, example{"E120/" + c, "connectors.yaml", append(append([]string{}, benchSets...),
			hostOffload+"={num_host_blocks: 512, connector: "+c+"}"), openE120})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var outs [2][3][]byte
			for i, wake := range []bool{false, true} {
				data, err := traces.Read(c.file)
				if err != nil {
					t.Fatal(err)
				}
				cfg, err := config.Parse(c.file, ".", data, c.sets)
				if err != nil {
					t.Fatal(err)
				}
				wl, err := Workload(cfg, c.open)
				if err != nil {
					t.Fatal(err)
				}
				rr := record.NewRecorder()
				res, err := RunWith(cfg, wl, engine.Options{Check: true, Observer: rr, WakeForEveryCompletion: wake})
				if err != nil {
					t.Fatal(err)
				}
				var passes bytes.Buffer
				if err := rr.Record().WriteJSONL(&passes); err != nil {
					t.Fatal(err)
				}
				outs[i] = [3][]byte{res.PredictionJSON(), res.RequestsJSONL(), passes.Bytes()}
			}
			for k, name := range []string{"prediction.json", "requests.jsonl", "passes.jsonl"} {
				if !bytes.Equal(outs[0][k], outs[1][k]) {
					t.Errorf("%s differs with deferred completions (%d vs %d bytes)", name, len(outs[0][k]), len(outs[1][k]))
				}
			}
		})
	}
}
