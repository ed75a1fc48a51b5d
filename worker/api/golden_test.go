package api

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.prediction.json from the native runs")

// TestGoldenPredictions pins the native prediction.json of the §B (docs/model/cases.md) example
// and the §A row the smoke test replays under wrangler dev: worker/smoke.sh
// compares the wasm worker's answers with these files byte for byte. After a
// deliberate report change: go test ./worker/api -run TestGoldenPredictions -update
func TestGoldenPredictions(t *testing.T) {
	for _, g := range []struct {
		file, example string
		sets          []string
	}{
		{"testdata/g2-restore.prediction.json", "g2-restore.yaml", nil},
		{"testdata/connectors-2048-simple_cpu_v0_32.prediction.json", "connectors.yaml", aRow},
	} {
		got := native(t, g.example, g.sets).Prediction
		if *update {
			if err := os.WriteFile(g.file, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(g.file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale:\n got  %s\n file %s\n(rerun with -update after a deliberate report change)", g.file, got, want)
		}
	}
}
