package proto

import (
	"reflect"
	"strings"
	"testing"
)

// sampleResult is a run reply of the default page's size: three runs of
// §A (docs/model/cases.md) with their views (six turns each) and pass metadata.
func sampleResult() *Reply {
	res := &RunResult{Indexing: true}
	for i, label := range []string{"offloading v0.24", "offloading v0.32", "SimpleCPU v0.32"} {
		v := &View{Label: label, Restored: 11488, Recomputed: 8800, G1Reused: 2000, InputTokens: 20320, TTFTP50: 6.5,
			TTFTP99: 71.25, Requests: 48, Completed: 48, Passes: 1963, HasHost: true, ElapsedMs: 12.5}
		for t := 0; t < 6; t++ {
			v.Turns = append(v.Turns, Turn{Turn: t, Requests: 8, G1: 100, Restored: 300, Recomputed: 200})
		}
		res.Results = append(res.Results, Outcome{Label: label, View: v, Rows: BinRef(i + 1), Prediction: TextRef(i + 1)})
		res.Passes = append(res.Passes, PassMeta{Recorded: true, BlockSize: 16, Ranks: []RankMeta{{Passes: 1963, Lines: 1963, G1: 128, G2: 192}}})
	}
	return &Reply{Type: MsgResult, ID: 7, Result: res}
}

// sampleFrame is a seek reply: one frame per run, each with a full event
// list.
func sampleFrame() *Reply {
	fr := &FrameReply{Rank: 0}
	for i := 0; i < 3; i++ {
		m := &FrameMeta{Pass: 658, StartMs: 1234.5, ComputeStartMs: 1234.5, EndMs: 1236.5, Scheduled: 2, NumEvents: 60}
		for e := 0; e < MaxFrameEvents; e++ {
			m.Events = append(m.Events, EventLine{Kind: "h2d_complete", Text: "s3t2: 16 blocks restored from G2 (s3t2#0 … s3t2#15)"})
		}
		fr.Frames = append(fr.Frames, &FrameOut{Bin: BinRef(i + 1), Meta: m})
	}
	return &Reply{Type: MsgFrame, ID: 9, Frame: fr}
}

// TestRoundTrip: requests and replies decode to what was encoded.
func TestRoundTrip(t *testing.T) {
	req := Request{Op: OpRun, ID: 3, Run: &RunJob{Config: "x: 1\n", Name: "c.yaml", Passes: true,
		Variants: []Variant{{Label: "a", Sets: []string{"p=1"}}}, Traces: []TraceText{{Path: "t.jsonl", Text: 1}}}}
	b, err := EncodeRequest(&req)
	if err != nil {
		t.Fatal(err)
	}
	got, bad := DecodeRequest(b)
	if bad != nil || !reflect.DeepEqual(got, req) {
		t.Errorf("request %+v (%v), want %+v", got, bad, req)
	}
	for _, r := range []*Reply{sampleResult(), sampleFrame(), {Type: MsgChecked, ID: 2, Error: &Error{Kind: "trace", Msg: "up.jsonl:2:1: bad", Line: 2, Col: 1}}} {
		b, err := EncodeReply(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := DecodeReply(b); !reflect.DeepEqual(&got, r) {
			t.Errorf("reply %s: got %+v", b, got)
		}
	}
}

// TestDecodeFailures: a message that does not decode keeps what it can
// say (its kind and id) and becomes an error.
func TestDecodeFailures(t *testing.T) {
	for _, c := range []struct {
		msg, typ string
		id       int
	}{
		{`{"type":"frame","id":4,"frame":{"frames":7}}`, MsgFrame, 4},
		{`{"type":"result","id":"x","result":{}}`, MsgResult, 0},
		{`not json`, "", 0},
		{`{"id":3}`, "", 3},
	} {
		r := DecodeReply([]byte(c.msg))
		if r.Type != c.typ || r.ID != c.id || r.Error == nil || !strings.Contains(r.Error.Msg, "could not read") || r.Frame != nil {
			t.Errorf("%s: %+v", c.msg, r)
		}
	}
	if ReplyType(OpSeek) != MsgFrame || ReplyType(OpSweepPoint) != OpSweepPoint || ReplyType("nope") != "" {
		t.Error("ReplyType")
	}
}

// BenchmarkResultReply encodes and decodes the default page's run reply,
// as the worker and the page do once per run.
func BenchmarkResultReply(b *testing.B) { benchReply(b, sampleResult()) }

// BenchmarkFrameReply encodes and decodes a seek reply, as the worker and
// the page do once per step of the pass view.
func BenchmarkFrameReply(b *testing.B) { benchReply(b, sampleFrame()) }

func benchReply(b *testing.B, r *Reply) {
	for b.Loop() {
		msg, err := EncodeReply(r)
		if err != nil {
			b.Fatal(err)
		}
		if got := DecodeReply(msg); got.Error != nil {
			b.Fatal(got.Error.Msg)
		}
	}
}
