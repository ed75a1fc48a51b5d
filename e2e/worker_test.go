package e2e

import (
	"iter"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// simWorker attaches to the page's simulation worker (sim-worker.js) as a
// DevTools target; attached must have been subscribed before the page
// opened.
func simWorker(t *testing.T, tb *tab, attached iter.Seq2[target.EventAttachedToTarget, error]) *tab {
	t.Helper()
	var id target.ID
	for ev, err := range attached {
		if err != nil {
			t.Fatalf("waiting for the simulation worker: %v", err)
		}
		if ev.TargetInfo.Type == "worker" && strings.HasSuffix(ev.TargetInfo.URL, "sim-worker.js") {
			id = ev.TargetInfo.TargetID
			break
		}
	}
	ctx, cancel := chromedp.NewContext(tb.ctx, chromedp.WithTargetID(id))
	t.Cleanup(cancel)
	return &tab{t: t, ctx: ctx}
}

// TestDeadWorkerIsReplaced: when the simulation worker's Go program has
// stopped (here it behaves as after Go exits on running out of memory:
// every call throws "Go program has already exited"), the run that meets
// it ends with a short message, the worker is replaced, and the next Run
// works without a reload.
func TestDeadWorkerIsReplaced(t *testing.T) {
	tb := newTab(t)
	attached := chromedp.Events(tb.ctx, target.AttachedToTarget)
	tb.open("")
	tb.singleMode()
	tb.idle()
	w := simWorker(t, tb, attached)
	if err := chromedp.Do(w.ctx, chromedp.Evaluate[chromedp.Void](
		`self.kvsimHandle = () => { throw new Error('Go program has already exited'); }`)); err != nil {
		t.Fatal(err)
	}
	tb.clickRun()
	msg := tb.text("#run-error")
	if !strings.Contains(msg, "has been restarted") || !strings.Contains(msg, "Go program has already exited") {
		t.Errorf("after the worker died the page says %q", msg)
	}
	tb.shot("25-dead-worker")
	tb.idle()
	tb.clickRun()
	if got := tb.text("#run-error"); got != "" {
		t.Errorf("the run after the restart: %q", got)
	}
	if got := tb.cardValue("card-recomputed"); got == "" || got == "–" {
		t.Errorf("recomputed %q after the restart", got)
	}
}
