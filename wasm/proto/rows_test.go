package proto

import (
	"reflect"
	"testing"
)

func TestRowsRoundTrip(t *testing.T) {
	rows := []Row{
		{ID: "s0t0", Session: "s0", Turn: 0, TTFT: 2, Input: 256, G1: 0, Host: 0, Recomputed: 256, Status: "completed", Prefill: -1, Decode: -1},
		{ID: "ü\nnï", Session: "", Turn: 5, TTFT: -1, Input: 1 << 30, G1: 3, Host: 7, Recomputed: -2, Status: "rejected", Prefill: 3, Decode: 1,
			PrefillPasses: 2, ComputeMs: 31.25, MemoryMs: 0.4375},
	}
	got, err := DecodeRows(EncodeRows(rows))
	if err != nil || !reflect.DeepEqual(got, rows) {
		t.Fatalf("%+v %v", got, err)
	}
	if got, err := DecodeRows(EncodeRows(nil)); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v %v", got, err)
	}
	for _, b := range [][]byte{nil, {1, 0, 0, 0}, append(EncodeRows(rows), "x"...)} {
		if _, err := DecodeRows(b); err == nil {
			t.Errorf("%q decoded", b)
		}
	}
}
