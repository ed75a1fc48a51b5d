package pack

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

type inner struct {
	A int32
	F float64
	S []string
}

type value struct {
	B        bool
	I        int
	I8       int8
	U        uint32
	F        float64
	NaN      float64
	S        string
	Nil      []int
	Empty    []int
	Ints     []int64
	Ptr      *inner
	NilPtr   *inner
	Structs  []inner
	hidden   int
	Nested   inner
	Negative int64
}

func sample() value {
	return value{B: true, I: -7, I8: -128, U: 1 << 31, F: 0.1 + 0.2, NaN: math.NaN(), S: "naïve #1", Empty: []int{},
		Ints: []int64{math.MinInt64, 0, math.MaxInt64}, Ptr: &inner{A: -1, F: math.Inf(-1), S: []string{"", "x"}},
		Structs: []inner{{A: 1}, {S: []string{}}}, hidden: 9, Nested: inner{F: -0.0}, Negative: -1}
}

// TestRoundTrip: every exported field comes back as it was (floats by
// their bits, nil and empty slices apart); unexported ones are left out.
func TestRoundTrip(t *testing.T) {
	in := sample()
	b, err := Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	var out value
	if err := Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if math.Float64bits(out.NaN) != math.Float64bits(in.NaN) || out.hidden != 0 || out.Nil != nil || out.Empty == nil {
		t.Fatalf("NaN %v, hidden %d, nil %v, empty %v", out.NaN, out.hidden, out.Nil, out.Empty)
	}
	out.NaN, in.NaN, in.hidden = 0, 0, 0
	if !reflect.DeepEqual(in, out) {
		t.Errorf("got %+v\nwant %+v", out, in)
	}
}

// TestGarbageNeverPanics: every prefix of an encoding, and random bytes,
// give an error, not a panic or a value.
func TestGarbageNeverPanics(t *testing.T) {
	in := sample()
	b, _ := Marshal(in)
	for n := range len(b) {
		var out value
		if err := Unmarshal(b[:n], &out); err == nil {
			t.Fatalf("a %d-byte prefix of %d decoded", n, len(b))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		g := make([]byte, rng.IntN(64))
		for i := range g {
			g[i] = byte(rng.Uint32())
		}
		var out value
		_ = Unmarshal(g, &out)
	}
	var out value
	if err := Unmarshal(append(b, 0), &out); err == nil {
		t.Error("trailing bytes decoded")
	}
	if err := Unmarshal(b, out); err == nil {
		t.Error("decoded into a value, not a pointer")
	}
	if _, err := Marshal(map[string]int{}); err == nil {
		t.Error("encoded a map")
	}
}
