package trace

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite traces/delta-sessions.jsonl from WriteConnectorsTrace")

// shippedTrace is the repository's copy of the §A trace
// (docs/model/cases.md ("Where the inputs are")).
var shippedTrace = filepath.Join("..", "..", "traces", "delta-sessions.jsonl")

func TestWriteConnectorsTraceMatchesCase(t *testing.T) {
	want, err := os.ReadFile("testdata/delta-sessions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := WriteConnectorsTrace(&got, ConnectorsTraceDefault()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("generated trace differs from testdata/delta-sessions.jsonl:\n%s", firstDiff(got.Bytes(), want))
	}
	if *update {
		if err := os.WriteFile(shippedTrace, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shipped, err := os.ReadFile(shippedTrace)
	if err != nil {
		t.Fatalf("%v (run go test ./core/trace -run ConnectorsTrace -update)", err)
	}
	if !bytes.Equal(shipped, want) {
		t.Fatalf("%s differs from the generator (run with -update)", shippedTrace)
	}
}

func firstDiff(got, want []byte) string {
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range min(len(gl), len(wl)) {
		if !bytes.Equal(gl[i], wl[i]) {
			return "line " + itoa(i+1) + "\n got: " + string(gl[i]) + "\nwant: " + string(wl[i])
		}
	}
	return "line counts " + itoa(len(gl)) + " vs " + itoa(len(wl))
}

func TestWriteConnectorsTraceShapes(t *testing.T) {
	var buf bytes.Buffer
	spec := ConnectorsTraceSpec{Sessions: 2, Turns: 2, FirstTurnTokens: 8, LaterTurnTokens: 4, OutputTokens: 3, BlockSize: 4, DelayMs: 7}
	if err := WriteConnectorsTrace(&buf, spec); err != nil {
		t.Fatal(err)
	}
	want := `{"request_id": "s0t0", "session_id": "s0", "input_length": 8, "output_length": 3, "hash_ids": [1, 2]}
{"request_id": "s0t1", "session_id": "s0", "input_length": 4, "output_length": 3, "hash_ids": [3], "delay": 7}
{"request_id": "s1t0", "session_id": "s1", "input_length": 8, "output_length": 3, "hash_ids": [4, 5]}
{"request_id": "s1t1", "session_id": "s1", "input_length": 4, "output_length": 3, "hash_ids": [6], "delay": 7}
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	bad := []ConnectorsTraceSpec{
		{Sessions: 0, Turns: 1, FirstTurnTokens: 4, BlockSize: 4},
		{Sessions: 1, Turns: 1, FirstTurnTokens: 4, BlockSize: 0},
		{Sessions: 1, Turns: 1, FirstTurnTokens: 6, BlockSize: 4},
		{Sessions: 1, Turns: 2, FirstTurnTokens: 4, LaterTurnTokens: 0, BlockSize: 4},
		{Sessions: 1, Turns: 1, FirstTurnTokens: 4, BlockSize: 4, DelayMs: -1},
	}
	for _, s := range bad {
		if err := WriteConnectorsTrace(&bytes.Buffer{}, s); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
	if err := WriteConnectorsTrace(errWriter{}, spec); err == nil {
		t.Error("write error not returned")
	}
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("full") }

// TestBenchTraceReads checks the benchmark trace: 10,000 sessions × 6.
func TestBenchTraceReads(t *testing.T) {
	w, err := Read(bytes.NewReader(benchTrace(t)), Options{Name: "bench.jsonl", Format: FormatMooncakeDelta, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Sessions) != 10000 || w.Rows != 60000 || w.NumContentIDs != 10000*36 {
		t.Fatalf("sessions %d rows %d ids %d", len(w.Sessions), w.Rows, w.NumContentIDs)
	}
}
