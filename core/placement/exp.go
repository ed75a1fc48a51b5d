package placement

import "math"

// expNeg is e^x for x ≤ 0 in plain IEEE arithmetic. math.Exp is assembly
// on amd64 and Go on wasm, and the two may differ in the last bit, which
// could move a softmax draw across a boundary: the same config must route
// the same way natively and in the browser (docs/architecture.md,
// principle 1). Each product is converted explicitly so that no compiler
// fuses it into a multiply-add.
func expNeg(x float64) float64 {
	if x < -745 {
		return 0 // below the smallest subnormal
	}
	const (
		ln2Hi = 6.93147180369123816490e-01 // ln 2, high bits (exact times small k)
		ln2Lo = 1.90821492927058770002e-10
	)
	k := math.Round(x / math.Ln2)
	r := float64(x-float64(k*ln2Hi)) - float64(k*ln2Lo) // |r| ≤ ln2/2
	// Taylor series to r^16/16!: the remainder is below 1e-21 for |r| ≤ 0.35.
	p := 1.0
	for i := 16; i >= 1; i-- {
		p = 1 + float64(float64(r*p)/float64(i))
	}
	return math.Ldexp(p, int(k))
}
