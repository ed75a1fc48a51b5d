//go:build js && wasm

package main

import (
	"encoding/json"
	"syscall/js"
	"testing"

	"github.com/kvsim/kvsim/core/sweep"
	"github.com/kvsim/kvsim/wasm/proto"
)

// TestHandleJS drives kvsimHandle the way sim-worker.js does: a plain
// JavaScript message object in, progress through a JavaScript callback,
// a result object out whose report strings equal the native goldens.
func TestHandleJS(t *testing.T) {
	c := goldenCases[0]
	obj := js.Global().Get("Object")
	msg := obj.New()
	msg.Set("op", "run")
	msg.Set("id", 7)
	msg.Set("config", string(mustRead(t, c.config)))
	msg.Set("name", c.config)
	msg.Set("requests", true)
	v := obj.New()
	v.Set("label", "simple")
	sets := js.Global().Get("Array").New()
	for _, s := range c.sets {
		sets.Call("push", s)
	}
	v.Set("sets", sets)
	msg.Set("variants", js.Global().Get("Array").New(v))

	var progress int
	post := js.FuncOf(func(_ js.Value, args []js.Value) any {
		if args[0].Get("type").String() == proto.MsgProgress {
			progress++
		}
		return nil
	})
	defer post.Release()
	out := js.ValueOf(handle(js.Undefined(), []js.Value{msg, post.Value}))
	if out.Get("type").String() != proto.MsgResult || out.Get("id").Int() != 7 {
		t.Fatalf("type %v id %v", out.Get("type"), out.Get("id"))
	}
	r := out.Get("results").Index(0)
	if !r.Get("error").IsUndefined() {
		t.Fatalf("error: %v", r.Get("error").Get("msg"))
	}
	compareGolden(t, c.name, "prediction.json", []byte(r.Get("prediction").String()))
	compareGolden(t, c.name, "requests.jsonl", []byte(r.Get("requests").String()))
	var view proto.View
	if err := json.Unmarshal([]byte(r.Get("view").String()), &view); err != nil {
		t.Fatal(err)
	}
	if view.Restored != 15568 || view.Recomputed != 5248 || view.Label != "simple" {
		t.Errorf("view %+v", view)
	}
	if progress == 0 {
		t.Error("no progress message")
	}
	u := r.Get("rows")
	b := make([]byte, u.Get("length").Int())
	js.CopyBytesToGo(b, u)
	rows, err := proto.DecodeRows(b)
	if err != nil || len(rows) != 48 || rows[0].ID != "s0t0" {
		t.Errorf("rows: %d %v", len(rows), err)
	}

	// requests.jsonl on demand: from the kept run, and replayed from the
	// spec when the worker no longer holds the run
	for _, runID := range []int{7, 99} {
		fm := obj.New()
		fm.Set("op", "file")
		fm.Set("id", 8)
		fm.Set("run", runID)
		fm.Set("variant", 0)
		fm.Set("kind", "requests.jsonl")
		fm.Set("spec", msg)
		f := js.ValueOf(handle(js.Undefined(), []js.Value{fm}))
		if f.Get("type").String() != proto.MsgFile || !f.Get("error").IsUndefined() {
			t.Fatalf("file (run %d): %v", runID, js.Global().Get("JSON").Call("stringify", f))
		}
		compareGolden(t, c.name, "requests.jsonl", []byte(f.Get("text").String()))
	}
}

// TestHandleNeverThrows feeds malformed messages.
func TestHandleNeverThrows(t *testing.T) {
	for _, m := range []any{nil, "text", map[string]any{"op": "run"}, map[string]any{"op": "nope", "id": 3},
		map[string]any{"op": "check", "text": "{", "format": "mooncake", "blockSize": 16}} {
		out := js.ValueOf(handle(js.Undefined(), []js.Value{js.ValueOf(m)}))
		if out.Get("error").IsUndefined() {
			r := out.Get("results")
			if r.IsUndefined() || r.Index(0).Get("error").IsUndefined() {
				t.Errorf("%v: no error in %v", m, js.Global().Get("JSON").Call("stringify", out))
			}
		}
	}
}

// TestSweepHandleJS runs the default sweep through kvsimHandle's sweep
// ops with JavaScript objects, as the page's sweep workers do.
func TestSweepHandleJS(t *testing.T) {
	spec := js.Global().Get("Object").New()
	spec.Set("config", string(mustRead(t, sweep.DefaultConfig)))
	spec.Set("name", "traces/"+sweep.DefaultConfig)
	vary := js.Global().Get("Array").New()
	for _, v := range sweep.DefaultVary {
		vary.Call("push", v)
	}
	spec.Set("vary", vary)
	call := func(op string, set func(m js.Value)) js.Value {
		m := js.Global().Get("Object").New()
		m.Set("op", op)
		m.Set("id", 3)
		m.Set("sweep", spec)
		if set != nil {
			set(m)
		}
		out := js.ValueOf(handle(js.Undefined(), []js.Value{m}))
		if e := out.Get("error"); !e.IsUndefined() {
			t.Fatalf("%s: %s", op, e.Get("msg").String())
		}
		return out
	}
	var plan proto.SweepPlan
	if err := json.Unmarshal([]byte(call(proto.OpSweepPlan, nil).Get("plan").String()), &plan); err != nil || plan.Points != 24 {
		t.Fatalf("plan %+v %v", plan, err)
	}
	sums := js.Global().Get("Array").New()
	for i := 0; i < plan.Points; i++ {
		out := call(proto.OpSweepPoint, func(m js.Value) { m.Set("index", i) })
		if out.Get("index").Int() != i {
			t.Fatalf("point %d answered as %d", i, out.Get("index").Int())
		}
		sums.Call("push", out.Get("summary"))
	}
	out := call(proto.OpSweepCollect, func(m js.Value) { m.Set("summaries", sums) })
	compareGolden(t, "sweep-A", "csv", []byte(out.Get("csv").String()))
	compareGolden(t, "sweep-A", "json", []byte(out.Get("json").String()))
}
