package main

import (
	"fmt"
	"io"
	"testing"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/staticrender"

	"github.com/kvsim/kvsim/wasm/proto"
)

// BenchmarkRenderLargeResults is one render of the page (vugu's build and
// the static renderer's HTML) showing a three-run compare whose runs have
// as many requests as the Mooncake conversation trace (12,031, on 4
// workers): what a scrub of the pass view pays besides its frame (a
// render builds the whole page).
//
//	go test -run '^$' -bench RenderLargeResults ./ui
//	GOOS=js GOARCH=wasm go test -run '^$' -bench RenderLargeResults ./ui   # Go's lib/wasm on PATH
func BenchmarkRenderLargeResults(b *testing.B) {
	h := &nopHost{width: 600}
	a := NewRoot(h, "")
	ready, err := proto.EncodeReply(&proto.Reply{Type: proto.MsgReady})
	if err != nil {
		b.Fatal(err)
	}
	a.Deliver(readReply(ready, nil, nil, -1))
	req := h.last()
	if req.Run == nil {
		b.Fatalf("the page posted %+v, not its run", req)
	}
	res := &proto.RunResult{}
	var bins [][]byte
	var texts []any
	for _, v := range req.Run.Variants {
		rows := make([]proto.Row, 12031)
		for i := range rows {
			rows[i] = proto.Row{ID: fmt.Sprintf("s%dt%d", i/6, i%6), Session: fmt.Sprintf("s%d", i/6), Turn: i % 6,
				TTFT: float64(i%997) + 60, Input: 12000 + i%5000, Recomputed: 9000 + i%3000, Prefill: i % 4, Decode: -1, Status: "completed"}
		}
		view := proto.View{Label: v.Label, Requests: len(rows), Completed: len(rows), Workers: 4}
		bins = append(bins, proto.EncodeRows(rows))
		texts = append(texts, "{}")
		res.Results = append(res.Results, proto.Outcome{Label: v.Label, View: &view, Rows: proto.BinRef(len(bins)),
			Prediction: proto.TextRef(len(texts))})
	}
	enc, err := proto.EncodeReply(&proto.Reply{Type: proto.MsgResult, ID: req.ID, Result: res})
	if err != nil {
		b.Fatal(err)
	}
	a.Deliver(readReply(enc, bins, texts, -1))
	if len(a.Runs.Table.Rows()) != PageRows {
		b.Fatalf("the table shows %d rows", len(a.Runs.Table.Rows()))
	}
	env, err := vugu.NewBuildEnv()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := staticrender.New(io.Discard).Render(env.RunBuild(a)); err != nil {
			b.Fatal(err)
		}
		a.AfterRender()
	}
}
