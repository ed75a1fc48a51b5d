package report

import (
	"fmt"
	"math"
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

// TestPartRoundTrip: a part whose counters and records have every
// exported field set, with closed and open runs of inter-token gaps and
// nil and empty lists, comes back as it was; a part keeps only the
// records it is asked to; prefixes, trailing bytes and garbage are errors.
func TestPartRoundTrip(t *testing.T) {
	next := 0
	p := &Part{}
	fill(t, reflect.ValueOf(p).Elem(), &next)
	for i := range p.Records {
		r := &p.Records[i]
		r.SetGapBuffer(make([]Gap, 0, 2+i), NewGapValues())
		r.Tokens = 0
		for k, t := range []vtime.Time{1, 2, 3, 5, 7, 9, 10, 12.5, 15} {
			if k < 3+2*i {
				r.Token(t)
			}
		}
	}
	q := NewRequest()
	q.Routing = []Routing{}
	p.Records = append(p.Records, q)
	b := p.Encode(nil)
	got, err := DecodePart(b)
	if err != nil || len(got.Records) != len(p.Records) {
		t.Fatalf("%+v, %v", got, err)
	}
	exportedEqual(t, "part", reflect.ValueOf(*p), reflect.ValueOf(*got))
	for i := range p.Records {
		if g, w := gapList(&got.Records[i]), gapList(&p.Records[i]); !reflect.DeepEqual(g, w) || got.Records[i].closedGaps != p.Records[i].closedGaps {
			t.Errorf("record %d: gaps %v (%d closed), want %v (%d)", i, g, got.Records[i].closedGaps, w, p.Records[i].closedGaps)
		}
	}
	if r := got.Records[2]; r.Routing == nil || r.Admissions != nil || r.ArrivalMs.IsSet() {
		t.Error("nil and empty lists, or an unset time, did not come back")
	}
	keep := p.Records[1].Index
	if one, err := DecodePart(p.Encode(func(r *Request) bool { return r.Index == keep })); err != nil || len(one.Records) != 1 || one.Records[0].Index != keep {
		t.Errorf("kept %+v, %v", one, err)
	}
	for n := range len(b) {
		if _, err := DecodePart(b[:n]); err == nil {
			t.Fatalf("a %d-byte prefix of %d decoded", n, len(b))
		}
	}
	if _, err := DecodePart(append(b, 0)); err == nil {
		t.Error("trailing bytes decoded")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		g := append([]byte(nil), b[:rng.IntN(40)]...)
		for range rng.IntN(80) {
			g = append(g, byte(rng.Uint32()))
		}
		_, _ = DecodePart(g)
	}
}

// exportedEqual compares the exported fields of a and b, recursively
// through pointers, slices and structs (a record's unexported gap fields
// are compared by gapList).
func exportedEqual(t *testing.T, at string, a, b reflect.Value) {
	t.Helper()
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() != b.IsNil() {
			t.Errorf("%s: nil %v, want %v", at, b.IsNil(), a.IsNil())
		} else if !a.IsNil() {
			exportedEqual(t, at, a.Elem(), b.Elem())
		}
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			t.Errorf("%s: %d elements (nil %v), want %d (nil %v)", at, b.Len(), b.IsNil(), a.Len(), a.IsNil())
			return
		}
		for i := range a.Len() {
			exportedEqual(t, fmt.Sprintf("%s[%d]", at, i), a.Index(i), b.Index(i))
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if f := a.Type().Field(i); f.IsExported() {
				exportedEqual(t, at+"."+f.Name, a.Field(i), b.Field(i))
			}
		}
	case reflect.Float64:
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) {
			t.Errorf("%s: %v, want %v", at, b.Float(), a.Float())
		}
	default:
		if a.Interface() != b.Interface() {
			t.Errorf("%s: %v, want %v", at, b.Interface(), a.Interface())
		}
	}
}
