package trace

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzRead feeds arbitrary bytes to Read in both formats and checks that
// it never panics, that every failure is a positioned *Error (or a reader
// error), and that a success is internally consistent.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"testdata/delta-sessions.jsonl", "testdata/g2-restore.jsonl"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint8(16), true)
		f.Add(data, uint8(4), false)
	}
	f.Add([]byte(`{"session_id": "s", "timestamp": 1, "output_length": 2, "output_token_ids": [1, 2], "hash_ids": [1]}`+"\n"+
		`{"session_id": "s", "created_time": 5, "output_tokens": 0, "hash_ids": [1, 18446744073709551615], "meta": {"a": [null, true, "\u00e9"]}}`), uint8(3), false)
	f.Add([]byte(`{"hash_ids": [1], "output_length": 1, "delay_ms": 0, "input_tokens": 1}`+"\r\n\n"+`{"request_id": "x\ud83d\ude00"}`), uint8(1), true)
	f.Fuzz(func(t *testing.T, data []byte, blockSize uint8, delta bool) {
		format := FormatMooncake
		if delta {
			format = FormatMooncakeDelta
		}
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
		rows := 0
		for _, s := range w.Sessions {
			if len(s.Turns) == 0 || s.ArrivalMs < 0 {
				t.Fatalf("session %+v", s)
			}
			for k, tu := range s.Turns {
				rows++
				if tu.RunLength != bs || tu.ContentLength < 0 || len(tu.Content) != ceilDiv(tu.ContentLength, bs) ||
					(tu.OutputTokens != nil && len(tu.OutputTokens) != tu.OutputLength) || tu.DelayMs < 0 ||
					(k == 0 && tu.DelayMs != 0) || tu.Line < 1 {
					t.Fatalf("turn %+v", tu)
				}
				for _, id := range tu.Content {
					if id >= w.NumContentIDs {
						t.Fatalf("content id %d >= %d", id, w.NumContentIDs)
					}
				}
			}
		}
		if rows != w.Rows || rows == 0 || w.Accumulate != delta {
			t.Fatalf("rows %d/%d accumulate %v", rows, w.Rows, w.Accumulate)
		}
	})
}
