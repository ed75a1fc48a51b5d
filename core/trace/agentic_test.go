package trace

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/vtime"
)

// TestReadAgenticErrors pins the exact message, line and column of every
// malformed agentic_mooncake case (trace block size 4).
func TestReadAgenticErrors(t *testing.T) {
	const root = `{"request_id": "a", "output_length": 1, "hash_ids": [1]}`
	cases := []struct {
		name  string
		trace string
		want  string
	}{
		// request_id.
		{"missing request_id", `{"output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:1: request_id: missing required field"},
		{"null request_id is missing", `{"request_id": null, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:1: request_id: missing required field"},
		{"empty request_id", `{"request_id": "", "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:16: request_id: request id must not be empty or only whitespace"},
		{"whitespace request_id", `{"output_length": 1, "hash_ids": [1], "request_id": " \t"}`,
			"t.jsonl:1:53: request_id: request id must not be empty or only whitespace"},
		{"duplicate request_id names the first line", root + "\n\n" + `{"request_id": "b", "output_length": 1, "hash_ids": [1]}` + "\n" + `{"output_length": 1, "hash_ids": [2], "request_id": "a"}`,
			`t.jsonl:4:53: request_id: duplicate request id "a" (first on line 1)`},
		{"mooncake row checks come first", `{"request_id": "", "output_length": 1}`,
			"t.jsonl:1:1: hash_ids: missing required field"},
		{"mooncake capacity check", `{"request_id": "a", "input_length": 5, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:37: input_length: 5 exceeds the hash_ids capacity 4 (1 hash ids × block size 4)"},

		// wait_for shape.
		{"wait_for a string", root + "\n" + `{"request_id": "b", "wait_for": "a", "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:2:33: wait_for: expected an array of request id strings or null, found a string"},
		{"wait_for element a number", root + "\n" + `{"request_id": "b", "wait_for": ["a", 2], "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:2:39: wait_for[1]: expected a request id string, found a number"},
		{"wait_for element null", `{"request_id": "b", "wait_for": [null], "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:34: wait_for[0]: expected a request id string, found null"},
		{"wait_for trailing comma", `{"request_id": "b", "wait_for": ["a",], "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:38: invalid JSON: trailing comma before ']'"},
		{"wait_for unterminated", `{"request_id": "b", "wait_for": ["a"`,
			"t.jsonl:1:37: invalid JSON: unexpected end of line, expected ',' or ']'"},
		{"wait_for given twice", `{"request_id": "b", "wait_for": [], "wait_for": null, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:37: wait_for: duplicate field"},
		{"blank id in wait_for", root + "\n" + `{"request_id": "b", "wait_for": ["a", ""], "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:2:39: wait_for[1]: request id must not be empty or only whitespace"},
		{"waits for itself", root + "\n" + `{"request_id": "b", "wait_for": ["a", "b"], "output_length": 1, "hash_ids": [1]}`,
			`t.jsonl:2:39: wait_for[1]: request "b" waits for itself`},
		{"duplicate id in one wait_for", root + "\n" + `{"request_id": "c", "output_length": 1, "hash_ids": [1]}` + "\n" + `{"request_id": "b", "wait_for": ["a", "c", "a"], "output_length": 1, "hash_ids": [1]}`,
			`t.jsonl:3:44: wait_for[2]: duplicate request id "a" (also wait_for[0])`},

		// Delays.
		{"nonzero delay on a root", `{"request_id": "a", "delay": 5, "output_length": 1, "hash_ids": [1]}`,
			`t.jsonl:1:30: delay: nonzero delay 5 on root request "a" (a request without wait_for)`},
		{"empty wait_for is a root", `{"request_id": "a", "wait_for": [], "delay_ms": 0.5, "output_length": 1, "hash_ids": [1]}`,
			`t.jsonl:1:49: delay_ms: nonzero delay 0.5 on root request "a" (a request without wait_for)`},
		{"negative delay", root + "\n" + `{"request_id": "b", "wait_for": ["a"], "delay_ms": -1, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:2:52: delay_ms: invalid delay -1: must be finite and non-negative"},
		{"negative tool_wait_ms", root + "\n" + `{"request_id": "b", "wait_for": ["a"], "tool_wait_ms": -0.5, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:2:56: tool_wait_ms: invalid tool wait -0.5: must be finite and non-negative"},
		{"negative tool_wait_ms on a root", `{"request_id": "a", "tool_wait_ms": -3, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:37: tool_wait_ms: invalid tool wait -3: must be finite and non-negative"},
		{"tool_wait_ms a string", `{"request_id": "a", "tool_wait_ms": "3", "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:37: tool_wait_ms: expected a number or null, found a string"},
		{"tool_wait_ms beyond float64", `{"request_id": "a", "tool_wait_ms": -1e400, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:37: tool_wait_ms: -1e400 is out of range for a float64"},

		// Whole-file checks.
		{"unknown id at the reference", root + "\n" + `{"request_id": "b", "wait_for": ["a", "zz"], "output_length": 1, "hash_ids": [1]}`,
			`t.jsonl:2:39: wait_for[1]: unknown request id "zz": no row has this request_id`},
		{"unknown id is reported after the whole file", `{"request_id": "b", "wait_for": ["x"], "output_length": 1, "hash_ids": [1]}` + "\n" + `{"request_id": "c"}`,
			"t.jsonl:2:1: hash_ids: missing required field"},
		{"first unknown id in file order", `{"request_id": "b", "wait_for": ["x"], "output_length": 1, "hash_ids": [1]}` + "\n" + `{"request_id": "c", "wait_for": ["y"], "output_length": 1, "hash_ids": [1]}`,
			`t.jsonl:1:34: wait_for[0]: unknown request id "x": no row has this request_id`},
		{"unknown ids before cycles", `{"request_id": "a", "wait_for": ["b"], "output_length": 1, "hash_ids": [1]}` + "\n" + `{"request_id": "b", "wait_for": ["a"], "output_length": 1, "hash_ids": [1]}` + "\n" + `{"request_id": "c", "wait_for": ["q"], "output_length": 1, "hash_ids": [1]}`,
			`t.jsonl:3:34: wait_for[0]: unknown request id "q": no row has this request_id`},
		{"two-row cycle", `{"request_id": "a", "wait_for": ["b"], "output_length": 1, "hash_ids": [1]}` + "\n" + `{"request_id": "b", "wait_for": ["a"], "output_length": 1, "hash_ids": [1]}`,
			`t.jsonl:1:34: wait_for[0]: dependency cycle: "a" → "b" → "a" (each waits for the next)`},
		{"cycle starts at its first row in the file", root + "\n" +
			`{"request_id": "x", "wait_for": ["a", "z"], "output_length": 1, "hash_ids": [1]}` + "\n" +
			`{"request_id": "y", "wait_for": ["x"], "output_length": 1, "hash_ids": [1]}` + "\n" +
			`{"request_id": "z", "wait_for": ["y"], "output_length": 1, "hash_ids": [1]}`,
			`t.jsonl:2:39: wait_for[1]: dependency cycle: "x" → "z" → "y" → "x" (each waits for the next)`},
		{"cycle reached from a later row", root + "\n" +
			`{"request_id": "p", "wait_for": ["q"], "output_length": 1, "hash_ids": [1]}` + "\n" +
			`{"request_id": "q", "wait_for": ["a", "p"], "output_length": 1, "hash_ids": [1]}` + "\n" +
			`{"request_id": "s", "wait_for": ["q"], "output_length": 1, "hash_ids": [1]}`,
			`t.jsonl:2:34: wait_for[0]: dependency cycle: "p" → "q" → "p" (each waits for the next)`},
	}
	if len(cases) < 12 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := Read(strings.NewReader(c.trace), Options{Name: "t.jsonl", Format: FormatAgenticMooncake, BlockSize: 4})
			if err == nil {
				t.Fatalf("no error; got %d sessions", len(w.Sessions))
			}
			if got := err.Error(); got != c.want {
				t.Errorf("error\n got: %s\nwant: %s", got, c.want)
			}
			var te *Error
			if !errors.As(err, &te) {
				t.Errorf("error %T is not *Error", err)
			}
		})
	}
}

// TestReadAgenticLongCycle checks that a long cycle's message is bounded.
func TestReadAgenticLongCycle(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		b.WriteString(`{"request_id": "r` + itoa(i) + `", "wait_for": ["r` + itoa((i+1)%40) + `"], "output_length": 1, "hash_ids": [1]}` + "\n")
	}
	_, err := Read(strings.NewReader(b.String()), Options{Name: "t.jsonl", Format: FormatAgenticMooncake, BlockSize: 4})
	want := `t.jsonl:1:35: wait_for[0]: dependency cycle: "r0" → "r1" → "r2" → "r3" → "r4" → "r5" → "r6" → "r7" → "r8" → "r9" → "r10" → "r11" → "r12" → "r13" → "r14" → … (25 more) … → "r0" (each waits for the next)`
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}

// agenticTurn is the part of a Turn the play tests compare.
type agenticTurn struct {
	id       string
	deps     []int32
	delay    vtime.Time
	toolWait vtime.Time
	arrival  vtime.Time
	line     int
}

func playTurns(s Session) []agenticTurn {
	var out []agenticTurn
	for _, tu := range s.Turns {
		out = append(out, agenticTurn{tu.RequestID, tu.Deps, tu.DelayMs, tu.ToolWaitMs, tu.ArrivalMs, tu.Line})
	}
	return out
}

func readAgentic(t *testing.T, trace string) *Workload {
	t.Helper()
	w := mustRead(t, trace, FormatAgenticMooncake, 4)
	if !w.Agentic || w.Accumulate {
		t.Fatalf("agentic %v accumulate %v", w.Agentic, w.Accumulate)
	}
	return w
}

func checkPlay(t *testing.T, w *Workload, i int, id string, arrival vtime.Time, want []agenticTurn) {
	t.Helper()
	s := w.Sessions[i]
	if s.ID != id || s.ArrivalMs != arrival {
		t.Errorf("play %d: id %q arrival %v, want %q %v", i, s.ID, s.ArrivalMs, id, arrival)
	}
	if got := playTurns(s); !reflect.DeepEqual(got, want) {
		t.Errorf("play %d turns\n got: %+v\nwant: %+v", i, got, want)
	}
}

// TestReadAgenticChain is aisimulate's own two-row example extended by a
// grandchild: root → child → grandchild.
func TestReadAgenticChain(t *testing.T) {
	w := readAgentic(t, `{"request_id": "root", "session_id": "session", "input_length": 4, "output_length": 2, "hash_ids": [1], "timestamp": 50}
{"request_id": "child", "session_id": "session", "input_length": 4, "output_length": 1, "hash_ids": [1], "wait_for": ["root"], "delay": 2, "tool_wait_ms": 3}
{"request_id": "grandchild", "output_length": 1, "hash_ids": [1, 2], "wait_for": ["child"], "timestamp": 999, "delay_ms": 0.5}`)
	if len(w.Sessions) != 1 || w.Rows != 3 || !w.HasTimestamps || w.NumContentIDs != 2 {
		t.Fatalf("%+v", w)
	}
	checkPlay(t, w, 0, "session", 0, []agenticTurn{
		{"root", nil, 0, 0, 0, 1},
		{"child", []int32{0}, 2, 3, 0, 2},
		{"grandchild", []int32{1}, 0.5, 0, 0, 3},
	})
	tu := w.Sessions[0].Turns
	if tu[0].OutputLength != 2 || tu[1].ContentLength != 4 || tu[2].ContentLength != 8 ||
		!reflect.DeepEqual(tu[2].Content, []uint32{0, 1}) || tu[2].RunLength != 4 {
		t.Errorf("content %+v", tu)
	}
	// Each row is a whole prompt.
	if got := w.PromptLengths(0); !reflect.DeepEqual(got, []int{4, 4, 8}) {
		t.Errorf("prompt lengths %v", got)
	}
}

func TestReadAgenticFanOutFanIn(t *testing.T) {
	w := readAgentic(t, `{"request_id": "plan", "session_id": "p", "output_length": 1, "hash_ids": [1]}
{"request_id": "a", "session_id": "p", "wait_for": ["plan"], "tool_wait_ms": 10, "output_length": 1, "hash_ids": [2]}
{"request_id": "b", "wait_for": ["plan"], "tool_wait_ms": 20, "output_length": 1, "hash_ids": [3]}
{"request_id": "c", "session_id": "other", "wait_for": ["plan"], "output_length": 1, "hash_ids": [4]}
{"request_id": "join", "wait_for": ["c", "a", "b"], "delay": 1, "output_length": 1, "hash_ids": [5]}`)
	if len(w.Sessions) != 1 || w.HasTimestamps {
		t.Fatalf("sessions %v has timestamps %v", sessionIDs(w), w.HasTimestamps)
	}
	checkPlay(t, w, 0, "p", 0, []agenticTurn{
		{"plan", nil, 0, 0, 0, 1},
		{"a", []int32{0}, 0, 10, 0, 2},
		{"b", []int32{0}, 0, 20, 0, 3},
		{"c", []int32{0}, 0, 0, 0, 4},
		{"join", []int32{3, 1, 2}, 1, 0, 0, 5},
	})
}

// TestReadAgenticIndependentPlays interleaves two plays and a lone row;
// session_id does not group rows (two plays share "s").
func TestReadAgenticIndependentPlays(t *testing.T) {
	w := readAgentic(t, `{"request_id": "p", "session_id": "s", "timestamp": 10, "output_length": 1, "hash_ids": [1]}
{"request_id": "x", "timestamp": 30, "output_length": 1, "hash_ids": [2]}
{"request_id": "q", "wait_for": ["p"], "output_length": 1, "hash_ids": [1, 3]}

{"request_id": "lone", "session_id": "", "timestamp": 35.5, "output_length": 1, "hash_ids": [4]}
{"request_id": "y", "session_id": "s", "wait_for": ["x"], "tool_wait_ms": 0, "output_length": 1, "hash_ids": [2, 5]}`)
	if got, want := sessionIDs(w), []string{"s", "play_1", "play_2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("plays %v, want %v", got, want)
	}
	checkPlay(t, w, 0, "s", 0, []agenticTurn{{"p", nil, 0, 0, 0, 1}, {"q", []int32{0}, 0, 0, 0, 3}})
	checkPlay(t, w, 1, "play_1", 20, []agenticTurn{{"x", nil, 0, 0, 20, 2}, {"y", []int32{0}, 0, 0, 0, 6}})
	checkPlay(t, w, 2, "play_2", 25.5, []agenticTurn{{"lone", nil, 0, 0, 25.5, 5}})
	// Play turn slices must not overlap.
	_ = append(w.Sessions[0].Turns, Turn{})
	if w.Sessions[1].Turns[0].RequestID != "x" {
		t.Error("play turn slices overlap")
	}
	_ = append(w.Sessions[0].Turns[1].Deps, 7)
	if w.Sessions[1].Turns[1].Deps[0] != 0 {
		t.Error("deps slices overlap")
	}
}

// TestReadAgenticForwardDependency: a row may wait for one that comes later
// in the file; the play keeps file order, so Deps may point forward.
func TestReadAgenticForwardDependency(t *testing.T) {
	w := readAgentic(t, `{"request_id": "late", "session_id": "fwd", "wait_for": ["early"], "delay": 4, "output_length": 1, "hash_ids": [1]}
{"request_id": "other", "timestamp": 7, "output_length": 1, "hash_ids": [2]}
{"request_id": "early", "session_id": "ignored", "timestamp": 5, "output_length": 1, "hash_ids": [3]}
{"request_id": "last", "wait_for": ["late", "early"], "output_length": 1, "hash_ids": [4]}`)
	if got, want := sessionIDs(w), []string{"fwd", "play_1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("plays %v, want %v", got, want)
	}
	checkPlay(t, w, 0, "fwd", 0, []agenticTurn{
		{"late", []int32{1}, 4, 0, 0, 1},
		{"early", nil, 0, 0, 0, 3},
		{"last", []int32{0, 1}, 0, 0, 0, 4},
	})
	checkPlay(t, w, 1, "play_1", 2, []agenticTurn{{"other", nil, 0, 0, 2, 2}})
	// Content ids are interned in file order, not play order.
	if got := w.Sessions[0].Turns[1].Content; !reflect.DeepEqual(got, []uint32{2}) {
		t.Errorf("early content %v", got)
	}
}

// TestReadAgenticArrivals: roots' timestamps (absent = 0) minus the minimum
// root arrival of the file; a play starts at its earliest root; non-root
// timestamps are ignored.
func TestReadAgenticArrivals(t *testing.T) {
	play := func(ts [3]string) string {
		return `{"request_id": "a1", ` + ts[0] + `"output_length": 1, "hash_ids": [1]}
{"request_id": "a2", ` + ts[1] + `"output_length": 1, "hash_ids": [2]}
{"request_id": "a3", "wait_for": ["a1", "a2"], "timestamp": -1000, "output_length": 1, "hash_ids": [3]}
{"request_id": "b1", ` + ts[2] + `"output_length": 1, "hash_ids": [4]}`
	}
	cases := []struct {
		ts    [3]string
		roots []vtime.Time // a1, a2, b1
		plays []vtime.Time
		has   bool
	}{
		{[3]string{`"timestamp": 100, `, `"timestamp": 40, `, `"created_time": 60, `}, []vtime.Time{60, 0, 20}, []vtime.Time{0, 20}, true},
		{[3]string{`"timestamp": 100, `, `"timestamp": 40, `, ``}, []vtime.Time{100, 40, 0}, []vtime.Time{40, 0}, true},
		{[3]string{``, `"timestamp": 40, `, `"timestamp": 100, `}, []vtime.Time{0, 40, 100}, []vtime.Time{0, 100}, true},
		{[3]string{`"timestamp": -20, `, `"timestamp": 40.5, `, `"timestamp": null, `}, []vtime.Time{0, 60.5, 20}, []vtime.Time{0, 20}, true},
		{[3]string{``, ``, ``}, []vtime.Time{0, 0, 0}, []vtime.Time{0, 0}, false},
	}
	for _, c := range cases {
		w := readAgentic(t, play(c.ts))
		s := w.Sessions
		roots := []vtime.Time{s[0].Turns[0].ArrivalMs, s[0].Turns[1].ArrivalMs, s[1].Turns[0].ArrivalMs}
		if !reflect.DeepEqual(roots, c.roots) || !reflect.DeepEqual(arrivals(w), c.plays) || w.HasTimestamps != c.has ||
			s[0].Turns[2].ArrivalMs != 0 {
			t.Errorf("%q: roots %v plays %v has %v, want %v %v %v", c.ts, roots, arrivals(w), w.HasTimestamps, c.roots, c.plays, c.has)
		}
	}
}

// TestReadAgenticDeepChain reads a long chain (no recursion limits).
func TestReadAgenticDeepChain(t *testing.T) {
	const n = 20000
	var b strings.Builder
	b.WriteString(`{"request_id": "r0", "output_length": 1, "hash_ids": [1]}` + "\n")
	for i := 1; i < n; i++ {
		b.WriteString(`{"request_id": "r` + itoa(i) + `", "wait_for": ["r` + itoa(i-1) + `"], "output_length": 1, "hash_ids": [1]}` + "\n")
	}
	w := readAgentic(t, b.String())
	if len(w.Sessions) != 1 || len(w.Sessions[0].Turns) != n || w.Sessions[0].Turns[n-1].Deps[0] != n-2 {
		t.Fatalf("sessions %d", len(w.Sessions))
	}
}

// TestReadMooncakeIgnoresAgenticKeys: for mooncake formats wait_for and
// tool_wait_ms are unknown keys, skipped whatever their type.
func TestReadMooncakeIgnoresAgenticKeys(t *testing.T) {
	for _, f := range []string{FormatMooncake, FormatMooncakeDelta} {
		w := mustRead(t, `{"wait_for": 5, "tool_wait_ms": "x", "output_length": 1, "hash_ids": [1]}
{"wait_for": ["nobody"], "tool_wait_ms": -1, "wait_for": [], "output_length": 1, "hash_ids": [1]}`, f, 4)
		if w.Agentic || w.Rows != 2 || w.Sessions[0].Turns[0].Deps != nil || w.Sessions[1].Turns[0].ToolWaitMs != 0 {
			t.Errorf("%s: %+v", f, w)
		}
	}
}

// TestReadAgenticG2Restore reads the
// docs/model/cases.md ("Case C: agentic workers with private G2") example
// as one play: a chain seed → pressure → restore → finish, each waiting 98 ms
// after its predecessor completes (2 ms in the §B engine setup), so they start
// at 0, 100, 200 and 300 ms; restore repeats seed's prefix.
func TestReadAgenticG2Restore(t *testing.T) {
	data, err := os.ReadFile("testdata/agentic-g2-restore.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := os.ReadFile(filepath.Join("..", "..", "traces", "agentic-g2-restore.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shipped, data) {
		t.Error("traces/agentic-g2-restore.jsonl differs from testdata/agentic-g2-restore.jsonl")
	}
	w, err := Read(bytes.NewReader(data), Options{Name: "agentic-g2-restore.jsonl", Format: FormatAgenticMooncake, BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Sessions) != 1 || w.Rows != 4 || !w.Agentic || w.Accumulate || !w.HasTimestamps {
		t.Fatalf("%+v", w)
	}
	checkPlay(t, w, 0, "play0", 0, []agenticTurn{
		{"seed", nil, 0, 0, 0, 1},
		{"pressure", []int32{0}, 98, 0, 0, 2},
		{"restore", []int32{1}, 98, 0, 0, 3},
		{"finish", []int32{2}, 98, 0, 0, 4},
	})
	tu := w.Sessions[0].Turns
	for _, x := range tu {
		if x.ContentLength != 9 || x.OutputLength != 1 || len(x.Content) != 3 || x.RunLength != 4 {
			t.Errorf("%s: %+v", x.RequestID, x)
		}
	}
	if !reflect.DeepEqual(tu[0].Content, tu[2].Content) || reflect.DeepEqual(tu[0].Content, tu[1].Content) {
		t.Error("restore must repeat seed's hash ids and pressure must not")
	}
}
