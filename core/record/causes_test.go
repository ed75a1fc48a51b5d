package record_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/internal/harness"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/trace"
)

// recordWorld runs harness rows with a recorder and returns the record.
func recordWorld(t *testing.T, w harness.World, rows []harness.Row) *record.Record {
	t.Helper()
	cfg, err := config.Parse("test.yaml", ".", []byte(w.YAML()), nil)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := trace.Read(strings.NewReader(harness.RowsJSONL(rows)), trace.Options{Name: "t.jsonl", Format: trace.FormatMooncake, BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	rr := record.NewRecorder()
	e, err := engine.New(cfg, wl, engine.Options{Observer: rr, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return rr.Record()
}

// recordRows runs harness rows with a recorder and returns passes.jsonl's
// events, in order.
func recordRows(t *testing.T, w harness.World, rows []harness.Row) []record.Event {
	t.Helper()
	var buf bytes.Buffer
	if err := recordWorld(t, w, rows).WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	var out []record.Event
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var l struct{ Events []record.Event }
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l.Events...)
	}
	return out
}

func firstOf(evs []record.Event, kind, req string) *record.Event {
	for i := range evs {
		if evs[i].Kind == kind && (req == "" || evs[i].Request == req) {
			return &evs[i]
		}
	}
	return nil
}

// TestAdmissionWaitIsRecorded: B (two blocks) arrives while A holds three
// of G1's four blocks: B waits, and passes.jsonl says it needs 2 blocks,
// 1 is available, and A's 3 blocks are in use.
func TestAdmissionWaitIsRecorded(t *testing.T) {
	w := harness.World{G1: 4, MaxSeq: 2}
	evs := recordRows(t, w, []harness.Row{
		{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 11, Out: 3},
		{ID: "B", At: 1, Hash: []int{4, 5}, In: 8, Out: 1},
	})
	e := firstOf(evs, "admission_wait", "B")
	if e == nil {
		t.Fatalf("no admission_wait of B in %+v", evs)
	}
	if *e.Needed != 2 || *e.Available != 1 || *e.InUse != 3 || *e.Reserved != 0 || *e.Held != 0 || *e.Headroom != 0 {
		t.Errorf("admission_wait %+v; want needs 2, 1 available, 3 in use", describe(e))
	}
}

// TestStartLoadAndStoreRetryAreRecorded: under offloading_v0_24 with a
// 2-block G2 and slow copies, B's store of two blocks cannot fit while A's
// two are pending (store_retry), and R's restore of A's blocks starts its
// load (start_load queued, naming the transfer its h2d_submit submits).
func TestStartLoadAndStoreRetryAreRecorded(t *testing.T) {
	w := harness.World{G1: 8, G2: 2, D2H: 0.1, H2D: 1}
	evs := recordRows(t, w, []harness.Row{
		{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},
		{ID: "B", At: 1, Hash: []int{4, 5, 6}, In: 9, Out: 1},
		{ID: "P", At: 100, Hash: []int{7, 8, 9, 10, 11, 12, 13}, In: 25, Out: 1}, // evicts A and B from G1
		{ID: "R", At: 200, Hash: []int{1, 2, 14}, In: 9, Out: 1},
	})
	retry := firstOf(evs, "store_retry", "B")
	if retry == nil {
		t.Fatalf("no store_retry of B in %v", kinds(evs))
	}
	if *retry.From != 0 || *retry.To != 2 || *retry.Missing != 2 || *retry.Room != 0 {
		t.Errorf("store_retry %s; want blocks 0 to 2, 2 missing, room 0", describe(retry))
	}
	load := firstOf(evs, "start_load", "R")
	if load == nil {
		t.Fatalf("no start_load of R in %v", kinds(evs))
	}
	sub := firstOf(evs, "h2d_submit", "R")
	if load.Result != "queued" || sub == nil || sub.Transfer != load.Transfer || strings.Join(load.Blocks, " ") != "A#0 A#1" {
		t.Errorf("start_load %s, h2d_submit %+v; want queued A#0 A#1 with the submitted transfer", describe(load), sub)
	}
}

func kinds(evs []record.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Kind+" "+e.Request)
	}
	return out
}

func describe(e *record.Event) string {
	b, _ := json.Marshal(e)
	return string(b)
}
