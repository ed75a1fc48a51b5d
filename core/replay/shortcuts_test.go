package replay

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/internal/harness"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/vtime"
)

// TestStoreShortcutsChangeNothing: the G2 store hook answers the calls that
// cannot change anything without scanning (connector.Adapter.FullStoreHook
// lists them). Small random worlds built to reach those answers often
// (requests sharing prefixes and arriving together, tiers of a few blocks,
// slow copies, a G1 that preempts) give the same prediction.json,
// requests.jsonl and passes.jsonl, byte for byte, with the shortcuts off.
func TestStoreShortcutsChangeNothing(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		for _, conn := range []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"} {
			rng := rand.New(rand.NewPCG(seed, 11))
			w := harness.World{Connector: conn, G1: 8 + rng.IntN(40), G2: 2 + rng.IntN(10),
				Budget: 8 + rng.IntN(56), MaxSeq: 2 + rng.IntN(6),
				D2H: []float64{0, 0.25, 1}[rng.IntN(3)], H2D: []float64{0, 0.5, 2}[rng.IntN(3)]}
			rows := sharedPrefixRows(rng)
			t.Run(fmt.Sprintf("%d/%s", seed, conn), func(t *testing.T) {
				var outs [2][3][]byte
				for i, full := range []bool{false, true} {
					outs[i] = runWorld(t, w, rows, engine.Options{Check: true, FullStoreHook: full})
				}
				for k, name := range []string{"prediction.json", "requests.jsonl", "passes.jsonl"} {
					if !bytes.Equal(outs[0][k], outs[1][k]) {
						t.Errorf("%s differs with the store shortcuts on (%d vs %d bytes)\n%s", name, len(outs[0][k]), len(outs[1][k]), w.YAML())
					}
				}
			})
		}
	}
}

// sharedPrefixRows is 8–24 requests in bursts, each a shared prefix of a
// few blocks (one of three) and a tail of its own.
func sharedPrefixRows(rng *rand.Rand) []harness.Row {
	var prefixes [3][]int
	next := 1
	for i := range prefixes {
		for range 1 + rng.IntN(6) {
			prefixes[i] = append(prefixes[i], next)
			next++
		}
	}
	var rows []harness.Row
	for i := range 8 + rng.IntN(17) {
		hash := append([]int{}, prefixes[rng.IntN(3)]...)
		for range 1 + rng.IntN(5) {
			hash = append(hash, next)
			next++
		}
		rows = append(rows, harness.Row{ID: fmt.Sprintf("r%d", i), At: vtime.Time(rng.IntN(6) * 3),
			Hash: hash, Out: 1 + rng.IntN(8)})
	}
	return rows
}

// runWorld replays a harness world with the per-pass record on and returns
// prediction.json, requests.jsonl and passes.jsonl.
func runWorld(t *testing.T, w harness.World, rows []harness.Row, opts engine.Options) [3][]byte {
	t.Helper()
	cfg, err := config.Parse("test.yaml", ".", []byte(w.YAML()), nil)
	if err != nil {
		t.Fatal(err)
	}
	open := func(string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(harness.RowsJSONL(rows))), nil
	}
	wl, err := Workload(cfg, open)
	if err != nil {
		t.Fatal(err)
	}
	rr := record.NewRecorder()
	opts.Observer = rr
	res, err := RunWith(cfg, wl, opts)
	if err != nil {
		t.Fatal(err)
	}
	var passes bytes.Buffer
	if err := rr.Record().WriteJSONL(&passes); err != nil {
		t.Fatal(err)
	}
	return [3][]byte{res.PredictionJSON(), res.RequestsJSONL(), passes.Bytes()}
}
