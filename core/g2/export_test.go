package g2

import "slices"

// Clone returns an independent copy of t without its observer, for tests
// that probe what an operation would do without changing t.
func (t *Tier) Clone() *Tier {
	c := *t
	c.entries = slices.Clone(t.entries)
	c.freeEnt = slices.Clone(t.freeEnt)
	c.index = t.index.Clone()
	c.scratch = nil
	c.obs = nil
	return &c
}
