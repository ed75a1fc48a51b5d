package trace

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/vtime"
)

// fuzzFormats maps FuzzRead's format byte (mod 3) to a format.
var fuzzFormats = [...]string{FormatMooncake, FormatMooncakeDelta, FormatAgenticMooncake}

// FuzzRead feeds arbitrary bytes to Read in every format and checks that
// it never panics, that every failure is a positioned *Error (or a reader
// error), and that a success is internally consistent.
func FuzzRead(f *testing.F) {
	const mooncake, delta, agentic = uint8(0), uint8(1), uint8(2)
	for _, name := range []string{"testdata/delta-sessions.jsonl", "testdata/g2-restore.jsonl", "testdata/agentic-g2-restore.jsonl"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint8(16), delta)
		f.Add(data, uint8(4), mooncake)
		f.Add(data, uint8(4), agentic)
	}
	// Agentic rows: aisimulate's example, a fan-in with a forward
	// reference, a cycle, an unknown id, and bad wait_for / tool_wait_ms.
	f.Add([]byte(`{"request_id": "root", "session_id": "session", "input_length": 4, "output_length": 2, "hash_ids": [1], "timestamp": 0}`+"\n"+
		`{"request_id": "child", "session_id": "session", "input_length": 4, "output_length": 1, "hash_ids": [1], "wait_for": ["root"], "delay": 2, "tool_wait_ms": 3}`), uint8(3), agentic)
	f.Add([]byte(`{"request_id": "j", "wait_for": ["b", "a"], "delay_ms": 1.5, "output_length": 1, "hash_ids": [3]}`+"\n\n"+
		`{"request_id": "a", "timestamp": 9, "output_length": 1, "hash_ids": [1]}`+"\r\n"+
		`{"request_id": "b", "timestamp": -4, "wait_for": [], "tool_wait_ms": null, "output_length": 1, "hash_ids": [2]}`+"\n"+
		`{"request_id": "\u00e9", "session_id": "s", "wait_for": ["j"], "output_tokens": 1, "output_token_ids": [5], "hash_ids": []}`), uint8(0), agentic)
	f.Add([]byte(`{"request_id": "r", "output_length": 1, "hash_ids": [1]}`+"\n"+
		`{"request_id": "x", "wait_for": ["r", "y"], "output_length": 1, "hash_ids": [1]}`+"\n"+
		`{"request_id": "y", "wait_for": ["x"], "output_length": 1, "hash_ids": [1]}`), uint8(1), agentic)
	f.Add([]byte(`{"request_id": "x", "wait_for": ["nobody"], "output_length": 1, "hash_ids": [1]}`), uint8(1), agentic)
	f.Add([]byte(`{"request_id": "z", "wait_for": ["q", 1, ""], "tool_wait_ms": -1, "output_length": 1, "hash_ids": [1]}`), uint8(1), agentic)
	f.Add([]byte(`{"session_id": "s", "timestamp": 1, "output_length": 2, "output_token_ids": [1, 2], "hash_ids": [1]}`+"\n"+
		`{"session_id": "s", "created_time": 5, "output_tokens": 0, "hash_ids": [1, 18446744073709551615], "meta": {"a": [null, true, "\u00e9"]}}`), uint8(3), mooncake)
	f.Add([]byte(`{"hash_ids": [1], "output_length": 1, "delay_ms": 0, "input_tokens": 1}`+"\r\n\n"+`{"request_id": "x\ud83d\ude00"}`), uint8(1), delta)
	f.Fuzz(func(t *testing.T, data []byte, blockSize uint8, formatByte uint8) {
		format := fuzzFormats[int(formatByte)%len(fuzzFormats)]
		bs := int(blockSize%64) + 1
		w, err := Read(bytes.NewReader(data), Options{Name: "f.jsonl", Format: format, BlockSize: bs})
		if err != nil {
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("error %T %v is not *Error", err, err)
			}
			if te.Line < 0 || (te.Line > 0 && te.Col < 1) || te.Msg == "" || !strings.HasPrefix(err.Error(), "f.jsonl") {
				t.Fatalf("bad error %#v", te)
			}
			if te.Line > 0 {
				lines := bytes.Split(data, []byte("\n"))
				if te.Line > len(lines) || te.Col > len(lines[te.Line-1])+1 {
					t.Fatalf("error position %d:%d outside the input", te.Line, te.Col)
				}
			}
			return
		}
		if format == FormatAgenticMooncake {
			checkAgenticWorkload(t, w)
		}
		rows := 0
		for _, s := range w.Sessions {
			if len(s.Turns) == 0 || s.ArrivalMs < 0 {
				t.Fatalf("session %+v", s)
			}
			for k, tu := range s.Turns {
				rows++
				if tu.RunLength != bs || tu.ContentLength < 0 || len(tu.Content) != ceilDiv(tu.ContentLength, bs) ||
					(tu.OutputTokens != nil && len(tu.OutputTokens) != tu.OutputLength) || tu.DelayMs < 0 ||
					(k == 0 && tu.DelayMs != 0 && !w.Agentic) || tu.Line < 1 {
					t.Fatalf("turn %+v", tu)
				}
				for _, id := range tu.Content {
					if id >= w.NumContentIDs {
						t.Fatalf("content id %d >= %d", id, w.NumContentIDs)
					}
				}
			}
		}
		if rows != w.Rows || rows == 0 || w.Accumulate != (format == FormatMooncakeDelta) || w.Agentic != (format == FormatAgenticMooncake) {
			t.Fatalf("rows %d/%d accumulate %v agentic %v", rows, w.Rows, w.Accumulate, w.Agentic)
		}
	})
}

// checkAgenticWorkload checks the play invariants: unique nonempty request
// ids, in-range acyclic Deps that connect each play, roots with zero delay,
// and arrivals normalised so the earliest root is at 0.
func checkAgenticWorkload(t *testing.T, w *Workload) {
	t.Helper()
	ids := map[string]bool{}
	minRoot := vtime.Never
	for _, s := range w.Sessions {
		n := len(s.Turns)
		playMin := vtime.Never
		// Undirected reachability from turn 0 must cover the play.
		adj := make([][]int32, n)
		indeg := make([]int, n) // dependents-first topological check
		for k, tu := range s.Turns {
			if tu.RequestID == "" || ids[tu.RequestID] {
				t.Fatalf("request id %q empty or repeated", tu.RequestID)
			}
			ids[tu.RequestID] = true
			if tu.ToolWaitMs < 0 || tu.DelayMs < 0 {
				t.Fatalf("turn %+v", tu)
			}
			if len(tu.Deps) == 0 {
				if tu.Deps != nil || tu.DelayMs != 0 || tu.ToolWaitMs != 0 || tu.ArrivalMs < 0 {
					t.Fatalf("root %+v", tu)
				}
				playMin = min(playMin, tu.ArrivalMs)
				continue
			}
			if tu.ArrivalMs != 0 {
				t.Fatalf("non-root arrival %+v", tu)
			}
			for _, d := range tu.Deps {
				if d < 0 || int(d) >= n || int(d) == k {
					t.Fatalf("dep %d of turn %d in a play of %d", d, k, n)
				}
				adj[k] = append(adj[k], d)
				adj[d] = append(adj[d], int32(k))
				indeg[d]++
			}
		}
		if playMin != s.ArrivalMs {
			t.Fatalf("play %q arrival %v, roots from %v", s.ID, s.ArrivalMs, playMin)
		}
		minRoot = min(minRoot, playMin)
		seen := make([]bool, n)
		queue := []int32{0}
		seen[0] = true
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			for _, y := range adj[x] {
				if !seen[y] {
					seen[y] = true
					queue = append(queue, y)
				}
			}
		}
		if slices.Contains(seen, false) {
			t.Fatalf("play %q is not connected", s.ID)
		}
		// Kahn's algorithm over "k waits for d" edges: all turns must be
		// removed, else there is a cycle.
		var ready []int
		for k := range n {
			if indeg[k] == 0 {
				ready = append(ready, k)
			}
		}
		removed := 0
		for len(ready) > 0 {
			k := ready[len(ready)-1]
			ready = ready[:len(ready)-1]
			removed++
			for _, d := range s.Turns[k].Deps {
				if indeg[d]--; indeg[d] == 0 {
					ready = append(ready, int(d))
				}
			}
		}
		if removed != n {
			t.Fatalf("play %q has a dependency cycle", s.ID)
		}
	}
	if minRoot != 0 {
		t.Fatalf("earliest root arrival %v", minRoot)
	}
}
