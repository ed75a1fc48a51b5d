package vtime

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
)

func TestSentinels(t *testing.T) {
	if !math.IsInf(float64(Never), 1) {
		t.Errorf("Never = %v, want +Inf", Never)
	}
	if Unset().IsSet() || !Time(0).IsSet() || !Never.IsSet() {
		t.Error("IsSet: Unset must be the only unset time")
	}
	a, b := Time(0.1), Time(0.2)
	if Unset().Same(Unset()) || !Time(1.5).Same(1.5) || (a + b).Same(0.3) {
		t.Error("Same must be exact equality")
	}
}

// TestEncodesAsFloat64 pins what keeps the reports byte-identical: fmt and
// encoding/json print a Time exactly like the float64 it holds.
func TestEncodesAsFloat64(t *testing.T) {
	x := 0.1
	for _, f := range []float64{0, 1.5, 1e21, 1e-7, x + 0.2, 123456.789} {
		v := Time(f)
		if got, want := fmt.Sprintf("%v %g %.3f", v, v, v), fmt.Sprintf("%v %g %.3f", f, f, f); got != want {
			t.Errorf("fmt: %q, want %q", got, want)
		}
		gj, _ := json.Marshal(struct{ T Time }{v})
		wj, _ := json.Marshal(struct{ T float64 }{f})
		if string(gj) != string(wj) {
			t.Errorf("json: %s, want %s", gj, wj)
		}
	}
}
