package placement

// leastLoaded sends a request to the rank with the fewest active + queued
// requests, the lowest index among equals (docs/model/engine.md
// ("Placement")).
type leastLoaded struct{}

func (leastLoaded) Route(_ *Request, v View) Choice {
	i := lightest(v)
	return Choice{Index: i, Target: v.Target(i)}
}

// lightest is the least-loaded candidate, the lowest index among equals.
func lightest(v View) int {
	best, bestN := 0, -1
	for i := range v.Len() {
		l := v.Load(i)
		if n := l.Active + l.Queued; bestN < 0 || n < bestN {
			best, bestN = i, n
		}
	}
	return best
}

// sessionAffinity keeps a session on the rank of its first turn (its home)
// while that rank is admissible; the first turn, and any turn whose home is
// not admissible, goes to the least-loaded rank. The home never moves.
type sessionAffinity struct {
	home map[int32]int // session → candidate index
}

func (s *sessionAffinity) Route(req *Request, v View) Choice {
	h, ok := s.home[req.Session]
	if !ok {
		h = lightest(v)
		s.home[req.Session] = h
	} else if !Admissible(v.Load(h)) {
		h = lightest(v)
	}
	return Choice{Index: h, Target: v.Target(h)}
}

// Admissible reports whether a session's home rank still takes its next
// turn. Decision (docs/model/engine.md ("Placement")): it does while its
// active + queued requests are fewer than its max_sequences, so the turn
// can join the next pass's batch without waiting behind a full one.
func Admissible(l Load) bool { return l.Active+l.Queued < l.MaxSequences }
