//go:build js && wasm

package main

import (
	"encoding/json"
	"fmt"
	"syscall/js"
	"time"

	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/wasm/proto"
)

// main registers kvsimHandle and then parks, so the worker can call it for
// as long as it lives.
func main() {
	js.Global().Set("kvsimHandle", js.FuncOf(handle))
	select {}
}

// handle is kvsimHandle(message, post): it runs one job synchronously (the
// worker has nothing else to do meanwhile), calls post with progress
// messages, and returns the result message. It never throws: every failure,
// a panic included, becomes an {error} object.
func handle(_ js.Value, args []js.Value) (ret any) {
	id := 0
	defer func() {
		if r := recover(); r != nil {
			ret = errorMessage(proto.MsgResult, id, &jobError{Kind: "internal", Msg: fmt.Sprintf("internal error: %v", r)})
		}
	}()
	if len(args) == 0 || args[0].Type() != js.TypeObject {
		return errorMessage(proto.MsgResult, 0, &jobError{Kind: "internal", Msg: "kvsimHandle needs a message object"})
	}
	j := decodeJob(args[0])
	id = j.ID
	var post js.Value
	if len(args) > 1 && args[1].Type() == js.TypeFunction {
		post = args[1]
	}
	switch j.Op {
	case proto.OpCheck:
		info, err := j.check()
		if err != nil {
			return errorMessage(proto.MsgChecked, j.ID, err)
		}
		b, _ := json.Marshal(info)
		return map[string]any{"type": proto.MsgChecked, "id": j.ID, "info": string(b)}
	case proto.OpRun:
		return runMessage(j, post)
	case proto.OpFile:
		return fileMessage(j, args[0])
	case proto.OpIndex:
		return indexMessage(j)
	case proto.OpSeek:
		return seekMessage(j, args[0])
	case proto.OpSweepPlan, proto.OpSweepPoint, proto.OpSweepCollect:
		return sweepMessage(j, args[0])
	}
	return errorMessage(proto.MsgResult, j.ID, &jobError{Kind: "internal", Msg: fmt.Sprintf("unknown op %q", j.Op)})
}

// kept is the most recent run job and its outcomes, kept for file
// requests (a worker holds one job's results at a time).
var kept struct {
	id     int
	outs   []runOut
	passes *passes // the per-pass records and their timeline index
}

// fileMessage answers {op: "file", id, run, variant, kind, spec}: the
// report file of variant `variant` of run job `run`. spec is that run's
// message; when this worker no longer holds the run (it was restarted),
// it replays the variant from spec, which gives the same bytes.
func fileMessage(j *job, m js.Value) any {
	run, variant, kind := intField(m, "run"), intField(m, "variant"), strField(m, "kind")
	var o runOut
	if kept.id == run && run != 0 && variant >= 0 && variant < len(kept.outs) {
		o = kept.outs[variant]
	} else if spec := m.Get("spec"); spec.Type() == js.TypeObject {
		o = decodeJob(spec).rerun(variant)
	} else {
		return errorMessage(proto.MsgFile, j.ID, &jobError{Kind: "internal", Msg: "the run is gone; run it again"})
	}
	if o.Err != nil {
		return errorMessage(proto.MsgFile, j.ID, o.Err)
	}
	b, err := o.file(kind)
	if err != nil {
		return errorMessage(proto.MsgFile, j.ID, err)
	}
	return map[string]any{"type": proto.MsgFile, "id": j.ID, "kind": kind, "text": string(b)}
}

func runMessage(j *job, post js.Value) any {
	var last time.Time
	var progress progressFunc
	if !post.IsUndefined() {
		progress = func(variant, done, total int) {
			now := time.Now()
			if done < total && now.Sub(last) < 50*time.Millisecond {
				return
			}
			last = now
			post.Invoke(map[string]any{"type": proto.MsgProgress, "id": j.ID, "variant": variant,
				"variants": max(1, len(j.Variants)), "done": done, "total": total})
		}
	}
	kept.id, kept.outs, kept.passes = 0, nil, nil // free the previous run first
	outs := j.run(progress)
	kept.id, kept.outs = j.ID, outs
	recs := make([]*record.Record, len(outs))
	anyRec := false
	for i, o := range outs {
		recs[i] = o.Record
		anyRec = anyRec || o.Record != nil
	}
	if anyRec {
		kept.passes = newPasses(recs)
	}
	results := make([]any, len(outs))
	for i, o := range outs {
		r := map[string]any{"label": o.Label}
		if o.Err != nil {
			r["error"] = errorObject(o.Err)
		} else {
			b, _ := json.Marshal(o.View)
			r["view"] = string(b)
			r["rows"] = bytesToJS(proto.EncodeRows(o.View.Rows))
			r["prediction"] = string(o.Prediction)
			if o.RequestsJS != nil {
				r["requests"] = string(o.RequestsJS)
			}
			if o.RecordNote != "" {
				r["recordNote"] = o.RecordNote
			}
		}
		results[i] = r
	}
	msg := map[string]any{"type": proto.MsgResult, "id": j.ID, "results": results}
	if kept.passes != nil {
		b, _ := json.Marshal(kept.passes.meta())
		msg["passes"] = string(b)
		msg["index"] = !kept.passes.done
	}
	return msg
}

// indexMessage advances the timeline index of the kept run by one step
// (sim-worker.js calls it in a setTimeout loop, so seeks interleave) and
// reports progress; the last step carries the timelines.
func indexMessage(j *job) any {
	p := kept.passes
	if p == nil || kept.id != j.ID {
		return map[string]any{"type": proto.MsgIndex, "id": j.ID, "done": true, "stale": true}
	}
	done := p.step(15 * time.Millisecond)
	msg := map[string]any{"type": proto.MsgIndex, "id": j.ID, "done": done, "indexed": p.indexed, "total": p.total}
	if done {
		msg["ms"] = float64(p.spent.Microseconds()) / 1000
		var tls []any
		for v := range p.tl {
			var ranks []any
			for _, t := range p.tl[v] {
				ranks = append(ranks, bytesToJS(proto.EncodeTimeline(t)))
			}
			tls = append(tls, ranks)
		}
		msg["timelines"] = tls
	}
	return msg
}

// seekMessage answers {op: "seek", id, run, rank, passes: [pass per
// variant, 0 to skip]} with one frame per variant.
func seekMessage(j *job, m js.Value) any {
	p := kept.passes
	if p == nil || kept.id != intField(m, "run") {
		return errorMessage(proto.MsgFrame, j.ID, &jobError{Kind: "internal", Msg: "the run's record is gone; run it again"})
	}
	rank := intField(m, "rank")
	ps := m.Get("passes")
	frames := make([]any, len(p.recs))
	for v := range p.recs {
		frames[v] = nil
		if p.recs[v] == nil || ps.Type() != js.TypeObject || v >= ps.Length() {
			continue
		}
		pass := ps.Index(v).Int()
		if pass <= 0 {
			continue
		}
		bin, meta, err := p.frame(v, rank, pass)
		if err != nil {
			frames[v] = map[string]any{"error": err.Error()}
			continue
		}
		frames[v] = map[string]any{"bin": bytesToJS(bin), "meta": string(meta)}
	}
	return map[string]any{"type": proto.MsgFrame, "id": j.ID, "rank": rank, "frames": frames}
}

func bytesToJS(b []byte) js.Value {
	u := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(u, b)
	return u
}

func errorObject(e *jobError) map[string]any {
	return map[string]any{"kind": e.Kind, "msg": e.Msg, "path": e.Path, "line": e.Line, "col": e.Col, "variant": e.Variant}
}

func errorMessage(typ string, id int, e *jobError) map[string]any {
	return map[string]any{"type": typ, "id": id, "error": errorObject(e)}
}

// decodeJob reads the message object. Missing fields take zero values.
func decodeJob(m js.Value) *job {
	j := &job{
		ID: intField(m, "id"), Op: strField(m, "op"), Config: strField(m, "config"), Name: strField(m, "name"),
		Overrides: strList(m.Get("overrides")), Requests: m.Get("requests").Truthy(), Passes: m.Get("passes").Truthy(),
		MaxPasses: int64(intField(m, "maxPasses")), Text: strField(m, "text"), Format: strField(m, "format"),
		BlockSize: intField(m, "blockSize"),
	}
	if vs := m.Get("variants"); vs.Type() == js.TypeObject {
		for i := 0; i < vs.Length(); i++ {
			v := vs.Index(i)
			j.Variants = append(j.Variants, proto.Variant{Label: strField(v, "label"), Sets: strList(v.Get("sets"))})
		}
	}
	if ts := m.Get("traces"); ts.Type() == js.TypeObject {
		keys := js.Global().Get("Object").Call("keys", ts)
		j.Traces = map[string]string{}
		for i := 0; i < keys.Length(); i++ {
			k := keys.Index(i).String()
			j.Traces[k] = ts.Get(k).String()
		}
	}
	return j
}

func strField(m js.Value, k string) string {
	if v := m.Get(k); v.Type() == js.TypeString {
		return v.String()
	}
	return ""
}

func intField(m js.Value, k string) int {
	if v := m.Get(k); v.Type() == js.TypeNumber {
		return v.Int()
	}
	return 0
}

func strList(v js.Value) []string {
	if v.Type() != js.TypeObject {
		return nil
	}
	out := make([]string, v.Length())
	for i := range out {
		out[i] = v.Index(i).String()
	}
	return out
}

// sweepMessage answers the sweep ops: the plan, one point, or the
// collected files (proto/sweep.go).
func sweepMessage(j *job, m js.Value) any {
	s := decodeSweep(m.Get("sweep"))
	switch j.Op {
	case proto.OpSweepPlan:
		info, err := s.info()
		if err != nil {
			return errorMessage(proto.OpSweepPlan, j.ID, err)
		}
		b, _ := json.Marshal(info)
		return map[string]any{"type": proto.OpSweepPlan, "id": j.ID, "plan": string(b)}
	case proto.OpSweepPoint:
		i := intField(m, "index")
		summary, pt, err := s.point(i)
		if err != nil {
			msg := errorMessage(proto.OpSweepPoint, j.ID, err)
			msg["index"] = i
			return msg
		}
		b, _ := json.Marshal(pt)
		return map[string]any{"type": proto.OpSweepPoint, "id": j.ID, "index": i, "summary": string(summary), "point": string(b)}
	}
	sums := strList(m.Get("summaries"))
	summaries := make([][]byte, len(sums))
	for i, x := range sums {
		summaries[i] = []byte(x)
	}
	csv, js, curves, err := s.collect(summaries)
	if err != nil {
		return errorMessage(proto.OpSweepCollect, j.ID, err)
	}
	b, _ := json.Marshal(curves)
	return map[string]any{"type": proto.OpSweepCollect, "id": j.ID, "csv": string(csv), "json": string(js), "curves": string(b)}
}

// decodeSweep reads a sweep spec object {config, name, sets, vary, traces}.
func decodeSweep(m js.Value) *sweepJob {
	s := &sweepJob{}
	if m.Type() != js.TypeObject {
		return s
	}
	s.Config, s.Name = strField(m, "config"), strField(m, "name")
	s.Sets, s.Vary = strList(m.Get("sets")), strList(m.Get("vary"))
	if ts := m.Get("traces"); ts.Type() == js.TypeObject {
		keys := js.Global().Get("Object").Call("keys", ts)
		s.Traces = map[string]string{}
		for i := 0; i < keys.Length(); i++ {
			k := keys.Index(i).String()
			s.Traces[k] = ts.Get(k).String()
		}
	}
	return s
}
