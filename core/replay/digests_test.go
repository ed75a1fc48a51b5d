package replay

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
)

// -update rewrites testdata/world-digests.golden from a native run. Do it
// only for a model change whose effect on the random worlds is intended,
// and say so in the commit.
var update = flag.Bool("update", false, "rewrite testdata/world-digests.golden from the native run")

const digestWorlds = 100

var digestsGolden = filepath.Join("testdata", "world-digests.golden")

// TestWorldDigests pins the reports of the first random worlds (those of
// TestRandomWorldsRunClean) by their SHA-256: prediction.json,
// requests.jsonl and passes.jsonl of each. The golden file is written by a
// native run and checked natively and under GOOS=js GOARCH=wasm, so it
// shows that the same config and trace give byte-identical reports on both
// (the guide's determinism rule) over far more shapes than the acceptance
// runs. A line is the seed, the world's kind and the three digests in that
// order; a world refused by validation is listed with its error's first
// line instead.
func TestWorldDigests(t *testing.T) {
	var b strings.Builder
	for seed := uint64(1); seed <= digestWorlds; seed++ {
		kind, yaml, rows := randomWorldOf(seed)
		cfg, err := config.Parse("world.yaml", ".", []byte(yaml), nil)
		if err != nil {
			fmt.Fprintf(&b, "%d %s refused: %s\n", seed, kind, strings.SplitN(err.Error(), "\n", 2)[0])
			continue
		}
		var out [3][]byte
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			out = runClean(t, cfg, rows)
		})
		fmt.Fprintf(&b, "%d %s", seed, kind)
		for _, o := range out {
			fmt.Fprintf(&b, " %x", sha256.Sum256(o))
		}
		b.WriteByte('\n')
	}
	got := b.String()
	if *update {
		if runtime.GOOS == "js" {
			t.Fatal("-update must run natively")
		}
		if err := os.WriteFile(digestsGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(digestsGolden)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.SplitAfter(string(data), "\n")
	for i, line := range strings.SplitAfter(got, "\n") {
		if i >= len(want) || line != want[i] {
			w := "(missing)"
			if i < len(want) {
				w = want[i]
			}
			t.Errorf("world digests differ at line %d:\n got  %s want %s(a model change that moves these worlds needs -update natively and a reason in the commit)", i+1, line, w)
			return
		}
	}
}
