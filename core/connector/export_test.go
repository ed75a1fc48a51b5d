package connector

// Test hooks into the registry.

func (r *Registry) NewStoreForTest(n int) *Transfer {
	t := r.newStore(n)
	r.add(t)
	return t
}

func (r *Registry) RetireForTest(t *Transfer) { r.retire(t) }

// PagesForTest counts the pages of the ID table still kept.
func (r *Registry) PagesForTest() int {
	n := 0
	for _, p := range r.pages {
		if p != nil {
			n++
		}
	}
	return n
}
