package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/traces"
	"github.com/kvsim/kvsim/ui/state"
)

// nativeSummary runs a config natively (built-in traces) and returns the
// figures the run view's cards show: restored, recomputed.
func nativeSummary(t *testing.T, yaml string, sets ...string) (restored, recomputed string) {
	t.Helper()
	out, err := replay.Run(replay.Job{Name: "config.yaml", Config: []byte(yaml), Sets: sets, Traces: replay.Traces{Builtin: true}})
	if err != nil {
		t.Fatal(err)
	}
	return state.Thousands(out.Summary.FirstAdmissionHostTokens), state.Thousands(out.Summary.CommittedPrefillTokens)
}

// TestAgenticWarmup uploads the agentic example trace
// (traces/agentic-g2-restore.jsonl, agentic_mooncake), runs it on the
// example's engine (traces/agentic-g2.yaml) with 2 lanes, snapshot seed 7
// and warmup, set through the controls; the cards match a native run of
// the YAML the page shows, which differs from the same run without warmup
// (the warm G2 holds the history: recomputed 40 vs 56 when this was
// written). Warmup ticked before a snapshot is refused next to its box
// with the parser's positioned message, and Run is disabled.
func TestAgenticWarmup(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.do(chromedp.Click(chromedp.CSS("details.upload summary")))
	// the upload's controls may be folded away: set them as a change does
	for _, js := range []string{`(() => { const s = document.getElementById('up-format');
		s.value = 'agentic_mooncake'; s.dispatchEvent(new Event('change', {bubbles: true})); })()`,
		`(() => { const s = document.getElementById('up-block');
		s.value = '4'; s.dispatchEvent(new Event('change', {bubbles: true})); })()`} {
		tb.do(chromedp.Evaluate[chromedp.Void](js))
	}
	tb.do(chromedp.SetUploadFiles(chromedp.ID("upload"), []string{filepath.Join(repoRoot, "traces", "agentic-g2-restore.jsonl")}))
	tb.wait("the upload check", `document.getElementById('upload-note')?.textContent.includes('agentic-g2-restore.jsonl:')`, 30*time.Second)
	example, err := traces.Read("agentic-g2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tb.setYAML(string(example))
	tb.wait("the agentic controls", `!!document.getElementById('f-snapshot_seed')`, 5*time.Second)

	tb.do(chromedp.Click(chromedp.ID("f-warmup")))
	tb.wait("the warmup error", `!!document.getElementById('err-warmup')`, 5*time.Second)
	if msg := tb.text("#err-warmup"); !strings.Contains(msg, "agentic_warmup") || !strings.Contains(msg, "requires agentic_snapshot") ||
		!strings.Contains(msg, ":") {
		t.Errorf("warmup error %q", msg)
	}
	if !eval[bool](tb, `document.getElementById('run').disabled`) {
		t.Error("Run is enabled with warmup but no snapshot")
	}
	t.Logf("refused: %s", tb.text("#err-warmup"))
	tb.typeInto("f-lanes", "2")
	tb.typeInto("f-snapshot_seed", "7")
	tb.wait("the snapshot config", `document.getElementById('yaml').value.includes('agentic_snapshot: {seed: 7}')`, 5*time.Second)
	if errs := eval[[]string](tb, `[...document.querySelectorAll('.err')].map(e => e.textContent)`); len(errs) != 0 {
		t.Fatalf("errors with lanes, seed and warmup set: %q", errs)
	}
	yaml := eval[string](tb, `document.getElementById('yaml').value`)
	if !strings.Contains(yaml, "agentic_warmup: true") || !strings.Contains(yaml, "agentic_lanes: 2") {
		t.Fatalf("YAML lacks the controls:\n%s", yaml)
	}
	tb.clickRun()
	restored, recomputed := nativeSummary(t, yaml)
	_, coldRecomputed := nativeSummary(t, yaml, "traffic.load.agentic_warmup=false")
	if coldRecomputed == recomputed {
		t.Errorf("warmup changes nothing natively (recomputed %s both ways)", recomputed)
	}
	if got := tb.cardValue("card-restored"); got != restored {
		t.Errorf("page restored %q, native %q", got, restored)
	}
	if got := tb.cardValue("card-recomputed"); got != recomputed {
		t.Errorf("page recomputed %q, native %q (cold: %s)", got, recomputed, coldRecomputed)
	}
	t.Logf("restored %s, recomputed %s (without warmup %s)", restored, recomputed, coldRecomputed)

	// the pass view: rank 0's preparation passes end where a native run's
	// passes reach the barrier
	out, err := replay.Run(replay.Job{Name: "config.yaml", Config: []byte(yaml), Traces: replay.Traces{Builtin: true},
		Capture: replay.Capture{Passes: true}})
	if err != nil {
		t.Fatal(err)
	}
	barrier := out.Summary.Agentic.Phases.ProfileStartMs
	prep := 0
	for i := 1; i <= out.Record.NumPasses(0); i++ {
		if in, _ := out.Record.Info(0, i); in.StartMs < barrier {
			prep = i
		}
	}
	tb.pvReady(0)
	tb.do(chromedp.Click(chromedp.ID("pv-first")))
	tb.pvReady(1)
	if got, want := tb.text("#pv-phase"), fmt.Sprintf("preparation pass 1 of %d", prep); !strings.HasPrefix(got, want) {
		t.Errorf("pass 1: %q, want %q…", got, want)
	}
	for range prep {
		tb.do(chromedp.Click(chromedp.ID("pv-next")))
	}
	tb.pvReady(prep + 1)
	if got := tb.text("#pv-phase"); !strings.HasPrefix(got, "first pass after the warmup barrier") {
		t.Errorf("pass %d: %q", prep+1, got)
	}
	orange := eval[int](tb, `(() => { const c = document.getElementById('pv-timeline');
		const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;
		for (let i = 0; i < d.length; i += 4) if (d[i] == 0xE6 && d[i+1] == 0x9F && d[i+2] == 0x00) n++;
		return n; })()`)
	if orange == 0 {
		t.Error("the timeline has no barrier line")
	}
	t.Logf("barrier %v ms; rank 0: %d preparation passes; %d barrier pixels", barrier, prep, orange)
	tb.shot("agentic-warmup")
}
