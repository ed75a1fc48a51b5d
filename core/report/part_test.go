package report

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/kvsim/kvsim/core/vtime"
)

// fill sets every exported field of v, recursively, to a value of its
// own (slices get two elements, pointers a value); a kind it does not
// know fails the test, so a new kind of field needs the codec's care.
func fill(t *testing.T, v reflect.Value, next *int) {
	*next++
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*next))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*next))
	case reflect.Float64:
		v.SetFloat(float64(*next) + 0.25)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *next))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), next)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(t, s.Index(i), next)
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i), next)
			}
		}
	default:
		t.Fatalf("a field of kind %s: EncodeRecords does not know it", v.Kind())
	}
}

func gapList(r *Request) []string {
	var out []string
	r.EachGap(func(ms vtime.Time, n int) { out = append(out, fmt.Sprint(ms, "x", n)) })
	return out
}

// TestRecordsRoundTrip: a record with every exported field set, its
// closed and open runs of inter-token gaps, and records with nil and
// empty lists come back as they were.
func TestRecordsRoundTrip(t *testing.T) {
	var recs []Request
	next := 0
	for i := range 3 {
		r := NewRequest()
		fill(t, reflect.ValueOf(&r).Elem(), &next)
		r.SetGapBuffer(make([]Gap, 0, 2+i), NewGapValues())
		r.Tokens = 0
		for k, t := range []vtime.Time{1, 2, 3, 5, 7, 9, 10, 12.5, 15} {
			if k < 3+2*i {
				r.Token(t)
			}
		}
		recs = append(recs, r)
	}
	recs[1].Routing, recs[1].Admissions, recs[1].Prefill = []Routing{}, nil, nil
	b, err := EncodeRecords(recs, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRecords(b)
	if err != nil || len(got) != len(recs) {
		t.Fatalf("%d records, %v", len(got), err)
	}
	for i := range recs {
		want, have := reflect.ValueOf(recs[i]), reflect.ValueOf(got[i])
		for f := range want.NumField() {
			if want.Type().Field(f).IsExported() && !reflect.DeepEqual(want.Field(f).Interface(), have.Field(f).Interface()) {
				t.Errorf("record %d, %s: %v, want %v", i, want.Type().Field(f).Name, have.Field(f).Interface(), want.Field(f).Interface())
			}
		}
		if g, w := gapList(&got[i]), gapList(&recs[i]); !reflect.DeepEqual(g, w) || got[i].closedGaps != recs[i].closedGaps {
			t.Errorf("record %d: gaps %v (%d closed), want %v (%d)", i, g, got[i].closedGaps, w, recs[i].closedGaps)
		}
	}
	if got[1].Routing == nil || got[1].Admissions != nil {
		t.Error("nil and empty lists are not told apart")
	}
	// Only the kept records, and nothing else decodes.
	if b, _ := EncodeRecords(recs, func(r *Request) bool { return r.Index == recs[2].Index }); true {
		if one, err := DecodeRecords(b); err != nil || len(one) != 1 || one[0].Index != recs[2].Index {
			t.Errorf("kept %d records, %v", len(one), err)
		}
	}
	for n := range len(b) {
		if _, err := DecodeRecords(b[:n]); err == nil {
			t.Fatalf("a %d-byte prefix of %d decoded", n, len(b))
		}
	}
	if _, err := DecodeRecords(append(b, 0)); err == nil {
		t.Error("trailing bytes decoded")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		g := make([]byte, rng.IntN(80))
		for i := range g {
			g[i] = byte(rng.Uint32())
		}
		_, _ = DecodeRecords(g)
	}
}
