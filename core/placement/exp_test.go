package placement

import (
	"math"
	"testing"
)

// TestExpNeg: expNeg agrees with math.Exp to 2 ulp-scale relative error
// on [−745, 0], and is exact at 0.
func TestExpNeg(t *testing.T) {
	if expNeg(0) != 1 {
		t.Fatalf("expNeg(0) = %v", expNeg(0))
	}
	for x := -40.0; x <= 0; x += 0.0137 {
		if got, want := expNeg(x), math.Exp(x); math.Abs(got-want) > 4e-16*want {
			t.Errorf("expNeg(%v) = %v; math.Exp %v", x, got, want)
		}
	}
	if expNeg(-800) != 0 || expNeg(-1e300) != 0 {
		t.Errorf("expNeg of very negative x: %v, %v; want 0", expNeg(-800), expNeg(-1e300))
	}
}
