package trace

import (
	"bytes"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/vtime"
)

func mustRead(t *testing.T, trace, format string, blockSize int) *Workload {
	t.Helper()
	w, err := Read(strings.NewReader(trace), Options{Name: "t.jsonl", Format: format, BlockSize: blockSize})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func sessionIDs(w *Workload) []string {
	var ids []string
	for _, s := range w.Sessions {
		ids = append(ids, s.ID)
	}
	return ids
}

func arrivals(w *Workload) []vtime.Time {
	var a []vtime.Time
	for _, s := range w.Sessions {
		a = append(a, s.ArrivalMs)
	}
	return a
}

func TestReadInterningOrder(t *testing.T) {
	w := mustRead(t, `{"output_length": 1, "hash_ids": [50, 30]}
{"output_length": 1, "hash_ids": [30, 70, 50]}
{"output_length": 1, "hash_ids": [18446744073709551615, 70]}`, "", 2)
	want := [][]uint32{{0, 1}, {1, 2, 0}, {3, 2}}
	for i, s := range w.Sessions {
		if got := s.Turns[0].Content; !reflect.DeepEqual(got, want[i]) {
			t.Errorf("row %d content %v, want %v", i+1, got, want[i])
		}
	}
	if w.NumContentIDs != 4 {
		t.Errorf("NumContentIDs %d, want 4", w.NumContentIDs)
	}
}

func TestReadAliasesAndNull(t *testing.T) {
	w := mustRead(t, `{"session_id": "s", "input_tokens": 6, "output_tokens": 3, "created_time": 10, "hash_ids": [1, 2]}
{"session_id": "s", "input_length": null, "output_tokens": 2, "delay_ms": 7.5, "hash_ids": [3], "request_id": null}
{"session_id": "s", "output_length": 1, "created_time": 40, "hash_ids": [4], "delay": null, "output_token_ids": null}`, "", 4)
	if len(w.Sessions) != 1 || len(w.Sessions[0].Turns) != 3 {
		t.Fatalf("sessions %v", sessionIDs(w))
	}
	tu := w.Sessions[0].Turns
	if tu[0].ContentLength != 6 || tu[0].OutputLength != 3 {
		t.Errorf("turn 0: input %d output %d", tu[0].ContentLength, tu[0].OutputLength)
	}
	if tu[1].ContentLength != 4 || tu[1].DelayMs != 7.5 || tu[1].RequestID != "" {
		t.Errorf("turn 1: %+v", tu[1])
	}
	// created_time is the timestamp; the most recent one is 10 (turn 1 has none).
	if tu[2].DelayMs != 30 || tu[2].OutputTokens != nil {
		t.Errorf("turn 2: %+v", tu[2])
	}
	if !w.HasTimestamps {
		t.Error("HasTimestamps false")
	}
}

func TestReadUnknownFieldsIgnored(t *testing.T) {
	w := mustRead(t, `{"model": "x", "meta": {"a": [1, {"b": null}], "c": "\ud800"}, "priority": 3, "output_length": 1, "hash_ids": [1], "tool_wait_ms": -1.5e3, "f": false, "t": true}`, "", 4)
	if w.Rows != 1 || w.Sessions[0].Turns[0].ContentLength != 4 {
		t.Fatalf("%+v", w)
	}
}

func TestReadTruncation(t *testing.T) {
	w := mustRead(t, `{"input_length": 5, "output_length": 1, "hash_ids": [10, 11, 12]}
{"output_length": 1, "hash_ids": [13]}
{"input_length": 0, "output_length": 0, "hash_ids": [14]}
{"output_length": 1, "hash_ids": []}`, "", 4)
	t0 := w.Sessions[0].Turns[0]
	if t0.ContentLength != 5 || t0.RunLength != 4 || !reflect.DeepEqual(t0.Content, []uint32{0, 1}) {
		t.Errorf("turn %+v", t0)
	}
	if got := t0.AppendContent(nil); !reflect.DeepEqual(got, []uint32{0, 0, 0, 0, 1}) {
		t.Errorf("tokens %v", got)
	}
	// Hash id 12 was interned although truncated away, so 13 gets id 3.
	if got := w.Sessions[1].Turns[0].Content; !reflect.DeepEqual(got, []uint32{3}) {
		t.Errorf("row 2 content %v", got)
	}
	if t2 := w.Sessions[2].Turns[0]; t2.ContentLength != 0 || len(t2.Content) != 0 {
		t.Errorf("row 3: %+v", t2)
	}
	if t3 := w.Sessions[3].Turns[0]; t3.ContentLength != 0 {
		t.Errorf("row 4: %+v", t3)
	}
	// The largest stored id is 3 (id 4 of hash 14 was truncated away).
	if w.NumContentIDs != 4 {
		t.Errorf("NumContentIDs %d", w.NumContentIDs)
	}
}

func TestReadNonContiguousSessions(t *testing.T) {
	w := mustRead(t, `{"session_id": "a", "request_id": "a0", "output_length": 1, "hash_ids": [1]}
{"session_id": "b", "request_id": "b0", "output_length": 1, "hash_ids": [2]}

{"session_id": "a", "request_id": "a1", "output_length": 2, "hash_ids": [3], "delay": 5}
{"request_id": "solo", "output_length": 1, "hash_ids": [4]}
{"session_id": "b", "request_id": "b1", "output_length": 1, "hash_ids": [5]}
{"session_id": "request_5", "output_length": 1, "hash_ids": [6]}`, "mooncake-delta", 4)
	if got, want := sessionIDs(w), []string{"a", "b", "request_5"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("sessions %v, want %v", got, want)
	}
	check := func(s int, reqs []string, lines []int) {
		t.Helper()
		var gr []string
		var gl []int
		for _, tu := range w.Sessions[s].Turns {
			gr = append(gr, tu.RequestID)
			gl = append(gl, tu.Line)
		}
		if !reflect.DeepEqual(gr, reqs) || !reflect.DeepEqual(gl, lines) {
			t.Errorf("session %s: requests %v lines %v, want %v %v", w.Sessions[s].ID, gr, gl, reqs, lines)
		}
	}
	check(0, []string{"a0", "a1"}, []int{1, 4})
	check(1, []string{"b0", "b1"}, []int{2, 6})
	// A row without session_id is session "request_<line>"; like aisimulate,
	// an explicit session_id with that name joins it.
	check(2, []string{"solo", ""}, []int{5, 7})
	if w.Rows != 6 || !w.Accumulate {
		t.Errorf("rows %d accumulate %v", w.Rows, w.Accumulate)
	}
	if d := w.Sessions[0].Turns[1].DelayMs; d != 5 {
		t.Errorf("delay %v", d)
	}
	// Turn slices must not overlap: appending to one cannot clobber another.
	_ = append(w.Sessions[0].Turns, Turn{})
	if w.Sessions[1].Turns[0].RequestID != "b0" {
		t.Error("session turn slices overlap")
	}
}

func TestReadTimestampDelays(t *testing.T) {
	w := mustRead(t, `{"session_id": "s", "timestamp": 100, "output_length": 1, "hash_ids": [1]}
{"session_id": "s", "timestamp": 250, "output_length": 1, "hash_ids": [2]}
{"session_id": "s", "output_length": 1, "hash_ids": [3]}
{"session_id": "s", "timestamp": 400, "output_length": 1, "hash_ids": [4]}
{"session_id": "s", "timestamp": 900, "delay": 3, "output_length": 1, "hash_ids": [5]}
{"session_id": "s", "timestamp": 1000, "output_length": 1, "hash_ids": [6]}
{"session_id": "s", "delay": 0, "timestamp": 1, "output_length": 1, "hash_ids": [7]}`, "", 4)
	var got []vtime.Time
	for _, tu := range w.Sessions[0].Turns {
		got = append(got, tu.DelayMs)
	}
	// turn 2 has no timestamp (0) and does not reset the previous one;
	// an explicit delay wins over the timestamp but the timestamp still
	// becomes the previous one.
	want := []vtime.Time{0, 150, 0, 150, 3, 100, 0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("delays %v, want %v", got, want)
	}
}

// TestReadArrivalNormalisation is
// docs/model/cases.md ("Case D: smaller checks"): arrivals listed sorted.
func TestReadArrivalNormalisation(t *testing.T) {
	cases := []struct {
		ts   [2]string
		want []vtime.Time
		has  bool
	}{
		{[2]string{"", `"timestamp": 100, `}, []vtime.Time{0, 100}, true},
		{[2]string{`"timestamp": 100, `, ""}, []vtime.Time{100, 0}, true},
		{[2]string{`"timestamp": 100, `, `"timestamp": 200, `}, []vtime.Time{0, 100}, true},
		{[2]string{"", ""}, []vtime.Time{0, 0}, false},
		{[2]string{`"timestamp": -50, `, `"created_time": 25.5, `}, []vtime.Time{0, 75.5}, true},
	}
	for _, c := range cases {
		trace := "{" + c.ts[0] + `"output_length": 1, "hash_ids": [1]}` + "\n{" + c.ts[1] + `"output_length": 1, "hash_ids": [2]}`
		w := mustRead(t, trace, "mooncake", 4)
		if got := arrivals(w); !reflect.DeepEqual(got, c.want) || w.HasTimestamps != c.has {
			t.Errorf("%q: arrivals %v has %v, want %v %v", c.ts, got, w.HasTimestamps, c.want, c.has)
		}
	}
}

func TestReadOutputTokenIDs(t *testing.T) {
	w := mustRead(t, `{"output_length": 3, "output_token_ids": [7, 0, 4294967295], "hash_ids": [1]}
{"output_length": 0, "output_token_ids": [], "hash_ids": [1]}`, "", 4)
	if got := w.Sessions[0].Turns[0].OutputTokens; !reflect.DeepEqual(got, []uint32{7, 0, 4294967295}) {
		t.Errorf("output tokens %v", got)
	}
	if got := w.Sessions[1].Turns[0].OutputTokens; got != nil && len(got) != 0 {
		t.Errorf("output tokens %v", got)
	}
	// Explicit output ids are not content: NumContentIDs counts hash ids only.
	if w.NumContentIDs != 1 {
		t.Errorf("NumContentIDs %d", w.NumContentIDs)
	}
}

func TestReadEscapedStrings(t *testing.T) {
	w := mustRead(t, `{"session_id": "s\u00e9\"\\\/\b\f\n\r\t\ud83d\ude00", "request_\u0069d": "r", "output_length": 1, "hash_ids": [1]}`, "", 4)
	if got, want := w.Sessions[0].ID, "sé\"\\/\b\f\n\r\t😀"; got != want {
		t.Errorf("session id %q, want %q", got, want)
	}
	if w.Sessions[0].Turns[0].RequestID != "r" {
		t.Errorf("escaped key not matched: %+v", w.Sessions[0].Turns[0])
	}
}

// TestReadDeltaSessions reads the shipped acceptance §A trace.
func TestReadDeltaSessions(t *testing.T) {
	data, err := os.ReadFile("testdata/delta-sessions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	w, err := Read(bytes.NewReader(data), Options{Name: "delta-sessions.jsonl", Format: FormatMooncakeDelta, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Sessions) != 8 || w.Rows != 48 || !w.Accumulate || w.HasTimestamps {
		t.Fatalf("sessions %d rows %d accumulate %v", len(w.Sessions), w.Rows, w.Accumulate)
	}
	if w.NumContentIDs != 8*(16+5*4) {
		t.Errorf("NumContentIDs %d", w.NumContentIDs)
	}
	next := uint32(0)
	total := 0
	for s, sess := range w.Sessions {
		if sess.ID != "s"+itoa(s) || sess.ArrivalMs != 0 || len(sess.Turns) != 6 {
			t.Fatalf("session %d: %s arrival %v turns %d", s, sess.ID, sess.ArrivalMs, len(sess.Turns))
		}
		for k, tu := range sess.Turns {
			wantLen, wantDelay := 64, vtime.Time(200)
			if k == 0 {
				wantLen, wantDelay = 256, 0
			}
			if tu.RequestID != "s"+itoa(s)+"t"+itoa(k) || tu.ContentLength != wantLen || tu.OutputLength != 64 ||
				tu.DelayMs != wantDelay || tu.RunLength != 16 || len(tu.Content) != wantLen/16 || tu.Line != s*6+k+1 {
				t.Errorf("s%dt%d: %+v", s, k, tu)
			}
			for _, id := range tu.Content {
				if id != next {
					t.Fatalf("s%dt%d: content id %d, want %d", s, k, id, next)
				}
				next++
			}
		}
		got := w.PromptLengths(s)
		if want := []int{256, 384, 512, 640, 768, 896}; !reflect.DeepEqual(got, want) {
			t.Errorf("prompt lengths %v, want %v", got, want)
		}
		for _, p := range got {
			total += p
		}
	}
	if total != 27648 {
		t.Errorf("total prompt tokens %d, want 27,648 (acceptance case A)", total)
	}
}

// TestReadG2Restore reads the acceptance §B trace: the "restore" row
// repeats "seed"'s hash ids.
func TestReadG2Restore(t *testing.T) {
	data, err := os.ReadFile("testdata/g2-restore.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	w, err := Read(bytes.NewReader(data), Options{Name: "g2-restore.jsonl", Format: FormatMooncake, BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sessionIDs(w), []string{"seed", "pressure", "restore", "finish"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("sessions %v", got)
	}
	if got, want := arrivals(w), []vtime.Time{0, 100, 200, 300}; !reflect.DeepEqual(got, want) {
		t.Errorf("arrivals %v", got)
	}
	if !reflect.DeepEqual(w.Sessions[0].Turns[0].Content, w.Sessions[2].Turns[0].Content) {
		t.Error("restore does not repeat seed's content")
	}
	for _, s := range w.Sessions {
		if tu := s.Turns[0]; tu.ContentLength != 9 || tu.OutputLength != 1 || len(tu.Content) != 3 {
			t.Errorf("%s: %+v", s.ID, tu)
		}
	}
	if w.Accumulate || w.PromptLengths(2)[0] != 9 {
		t.Error("mooncake prompt lengths")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestReadIndependentWorkloads checks the Workload owns its memory: reading a
// second trace does not change the first.
func TestReadIndependentWorkloads(t *testing.T) {
	a := mustRead(t, `{"session_id": "x", "request_id": "r1", "output_length": 1, "hash_ids": [5, 6]}`, "", 4)
	_ = mustRead(t, `{"session_id": "y", "request_id": "r2", "output_length": 1, "hash_ids": [7]}`, "", 4)
	if a.Sessions[0].ID != "x" || a.Sessions[0].Turns[0].RequestID != "r1" || !reflect.DeepEqual(a.Sessions[0].Turns[0].Content, []uint32{0, 1}) {
		t.Errorf("%+v", a.Sessions[0])
	}
}

// TestReadSparseAndDenseHashIDs mixes dense small ids with huge ones so
// both interner paths and the fallback are used.
func TestReadSparseAndDenseHashIDs(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"output_length": 1, "hash_ids": [1000000000, 3, 1000000000, 200000]}` + "\n")
	b.WriteString(`{"output_length": 1, "hash_ids": [200000, 3, 900000, 4]}` + "\n")
	w := mustRead(t, b.String(), "", 1)
	if got := w.Sessions[0].Turns[0].Content; !reflect.DeepEqual(got, []uint32{0, 1, 0, 2}) {
		t.Errorf("row 1 %v", got)
	}
	if got := w.Sessions[1].Turns[0].Content; !reflect.DeepEqual(got, []uint32{2, 1, 3, 4}) {
		t.Errorf("row 2 %v", got)
	}
	// 200000 is beyond the dense bound when first seen, so it goes to the
	// map; the dense slice later grows over it and lookups must still find
	// it there.
	var in interner
	if got := in.add(200000); got != 0 {
		t.Fatalf("add = %d", got)
	}
	if len(in.sparse) != 1 {
		t.Fatalf("200000 not in the sparse map")
	}
	for h := range uint64(30000) {
		if _, ok := in.lookup(h); ok {
			t.Fatalf("hash %d found before add", h)
		}
		in.add(h)
	}
	if got := in.add(250000); got != 30001 {
		t.Fatalf("add(250000) = %d", got)
	}
	if uint64(len(in.dense)) <= 250000 {
		t.Fatalf("dense slice did not grow over 250000: %d", len(in.dense))
	}
	if id, ok := in.lookup(200000); !ok || id != 0 {
		t.Fatalf("lookup(200000) = %d %v", id, ok)
	}
	for h := range uint64(30000) {
		if id, ok := in.lookup(h); !ok || id != uint32(h)+1 {
			t.Fatalf("lookup(%d) = %d %v", h, id, ok)
		}
	}
}
