//go:build js && wasm

package main

import (
	"syscall/js"
	"testing"

	"github.com/kvsim/kvsim/core/sweep"
	"github.com/kvsim/kvsim/wasm/proto"
	"github.com/kvsim/kvsim/wasm/wire"
)

// call sends a request through kvsimHandle as sim-worker.js does: an
// envelope in (texts as JavaScript strings), progress envelopes through a
// JavaScript callback, the reply's envelope out.
func call(t *testing.T, req proto.Request, texts []any, post js.Value) (proto.Reply, wire.Envelope) {
	t.Helper()
	b, err := proto.EncodeRequest(&req)
	if err != nil {
		t.Fatal(err)
	}
	args := []js.Value{wire.Pack(b, nil, texts)}
	if post.Truthy() {
		args = append(args, post)
	}
	out := js.ValueOf(handle(js.Undefined(), args))
	env, msg, err := wire.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	return proto.DecodeReply(msg), env
}

// text is a reply's text, read from its envelope.
func text(t *testing.T, env wire.Envelope, r proto.TextRef) []byte {
	t.Helper()
	s, err := env.Text(int(r))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(s)
}

// TestHandleJS drives kvsimHandle with envelopes: a run whose reports are
// texts of the reply (equal to the native goldens) and whose rows are a
// binary payload, progress through the callback, and the report file on
// demand, from the kept run and replayed from its spec.
func TestHandleJS(t *testing.T) {
	c := goldenCases[0]
	var progress int
	post := js.FuncOf(func(_ js.Value, args []js.Value) any {
		if _, msg, err := wire.Open(args[0]); err == nil && proto.DecodeReply(msg).Type == proto.MsgProgress {
			progress++
		}
		return nil
	})
	defer post.Release()
	run := &proto.RunJob{Config: string(mustRead(t, c.config)), Name: c.config, Requests: true,
		Variants: []proto.Variant{{Label: "simple", Sets: c.sets}}}
	r, env := call(t, proto.Request{Op: proto.OpRun, ID: 7, Run: run}, nil, post.Value)
	if r.Type != proto.MsgResult || r.ID != 7 || r.Result == nil || len(r.Result.Results) != 1 {
		t.Fatalf("reply %+v", r)
	}
	o := r.Result.Results[0]
	if o.Error != nil || o.View == nil {
		t.Fatalf("outcome %+v", o)
	}
	compareGolden(t, c.name, "prediction.json", text(t, env, o.Prediction))
	compareGolden(t, c.name, "requests.jsonl", text(t, env, o.Requests))
	if o.View.Restored != 15568 || o.View.Recomputed != 5248 || o.View.Label != "simple" {
		t.Errorf("view %+v", o.View)
	}
	if progress == 0 {
		t.Error("no progress message")
	}
	if next := env.Value().Get("next"); next.Type() != js.TypeNumber || next.Int() != 0 {
		t.Errorf("a run without records asks to index %v", next)
	}
	rows, err := proto.DecodeRows(env.Bins()[o.Rows-1])
	if err != nil || len(rows) != 48 || rows[0].ID != "s0t0" {
		t.Errorf("rows: %d %v", len(rows), err)
	}
	for _, runID := range []int{7, 99} {
		f, fenv := call(t, proto.Request{Op: proto.OpFile, ID: 8,
			File: &proto.FileJob{Run: runID, Kind: proto.FileRequests, Spec: run}}, nil, js.Undefined())
		if f.Type != proto.MsgFile || f.Error != nil || f.File == nil {
			t.Fatalf("file (run %d): %+v", runID, f)
		}
		compareGolden(t, c.name, "requests.jsonl", text(t, fenv, f.File.Text))
	}
}

// TestHandleNeverThrows feeds values that are not envelopes and envelopes
// that hold no request: each gets an error reply.
func TestHandleNeverThrows(t *testing.T) {
	bad := func(json string) js.Value { return wire.Pack([]byte(json), nil, nil) }
	plain := js.Global().Get("Object").New() // a request object, as messages were before envelopes
	plain.Set("op", "run")
	for _, m := range []js.Value{js.Null(), js.ValueOf("text"), plain, bad(`{`),
		bad(`{"op":"run","id":1}`), bad(`{"op":"nope","id":3}`),
		wire.Pack([]byte(`{"op":"check","id":2,"check":{"name":"x","text":1,"format":"mooncake","block_size":16}}`), nil, []any{"{"})} {
		out := js.ValueOf(handle(js.Undefined(), []js.Value{m}))
		_, msg, err := wire.Open(out)
		if err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		if r := proto.DecodeReply(msg); r.Error == nil {
			t.Errorf("%v: no error in %s", m, msg)
		}
	}
}

// TestSweepHandleJS runs the default sweep through kvsimHandle's sweep
// requests, as the page's sweep workers do: the summaries stay JavaScript
// strings and go back as texts of the collect request.
func TestSweepHandleJS(t *testing.T) {
	spec := proto.SweepSpec{Config: string(mustRead(t, sweep.DefaultConfig)), Name: "traces/" + sweep.DefaultConfig, Vary: sweep.DefaultVary}
	p, _ := call(t, proto.Request{Op: proto.OpSweepPlan, ID: 3, SweepPlan: &proto.SweepPlanJob{Spec: spec}}, nil, js.Undefined())
	if p.Error != nil || p.SweepPlan == nil || p.SweepPlan.Points != 24 {
		t.Fatalf("plan %+v", p)
	}
	var sums []any
	collect := &proto.SweepCollectJob{Spec: spec}
	for i := 0; i < p.SweepPlan.Points; i++ {
		r, env := call(t, proto.Request{Op: proto.OpSweepPoint, ID: 3, SweepPoint: &proto.SweepPointJob{Spec: spec, Index: i}}, nil, js.Undefined())
		if r.Error != nil || r.SweepPoint == nil || r.SweepPoint.Index != i {
			t.Fatalf("point %d: %+v", i, r)
		}
		sums = append(sums, env.Texts()[r.SweepPoint.Summary-1])
		collect.Summaries = append(collect.Summaries, proto.TextRef(len(sums)))
	}
	r, env := call(t, proto.Request{Op: proto.OpSweepCollect, ID: 3, SweepCollect: collect}, sums, js.Undefined())
	if r.Error != nil || r.SweepFiles == nil {
		t.Fatalf("collect %+v", r)
	}
	compareGolden(t, "sweep-A", "csv", text(t, env, r.SweepFiles.CSV))
	compareGolden(t, "sweep-A", "json", text(t, env, r.SweepFiles.JSON))
}
