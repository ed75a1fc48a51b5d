package trace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/kvsim/kvsim/core/vtime"
)

// Snapshots of agentic plays (docs/model/agentic.md ("Snapshot")), after
// aisimulate's prepare_snapshots (crates/core/src/replay/loadgen/snapshot.rs):
// lane l takes play l mod (number of plays) and starts it at a seeded cut
// t* drawn uniformly in 25-75 % of the play's span of recorded request
// starts. Requests that started before t* are history and do not run; the
// others keep their dependencies on live requests, and every dependency on
// history becomes a timer from the lane's start: the recorded trigger
// (start for a dispatch edge, end for a completion edge) plus the edge's
// delay, minus t*, as is the request's own recorded start minus t*.

// A Cut is one lane's snapshot.
type Cut struct {
	Lane, Play int
	// TStarMs is the cut on the play's recorded clock, in
	// [FirstMs, LastMs], the earliest and latest recorded request starts.
	TStarMs, FirstMs, LastMs vtime.Time
	History, Live            int
	// Primers are, per live conversation with history, its last historical
	// request (turn indices in the source play, in conversation order).
	Primers []int
	// Earliest is the live request of earliest recorded start (ties: the
	// first in the play), or -1 when nothing is live.
	Earliest int
}

// snapshotStream separates the cut draws of a seed from other PCG users.
const snapshotStream = 0x736e617073686f74

// Snapshot returns the workload of the initial snapshot plays, one session
// per lane: lane l's instance of play l mod len(w.Sessions), cut with a
// draw from seed, with its own content ids (ids + l × w.NumContentIDs, so
// no two lanes share a cached block). The sessions use explicit edges
// (Session.Edges) and each turn's not-before timer in ArrivalMs, from the
// lane's start at 0.
func Snapshot(w *Workload, lanes int, seed uint64) (*Workload, []Cut, error) {
	if !w.Agentic || lanes <= 0 || len(w.Sessions) == 0 {
		return nil, nil, fmt.Errorf("agentic snapshots need an agentic workload and positive lanes")
	}
	if uint64(lanes)*uint64(w.NumContentIDs) > uint64(GeneratedTokenBase) {
		return nil, nil, fmt.Errorf("%d snapshot lanes of %d content ids each exceed the %d token ids available",
			lanes, w.NumContentIDs, GeneratedTokenBase)
	}
	out := &Workload{Agentic: true, HasTimestamps: w.HasTimestamps, BlockSize: w.BlockSize,
		NestedTimestampBasis: w.NestedTimestampBasis, NumContentIDs: uint32(lanes) * w.NumContentIDs}
	cuts := make([]Cut, lanes)
	for l := range lanes {
		p := l % len(w.Sessions)
		rng := rand.New(rand.NewPCG(seed, snapshotStream+uint64(l)))
		s, cut, err := snapshotPlay(&w.Sessions[p], "lane"+strconv.Itoa(l)+":", cutAt(rng.Float64()), uint32(l)*w.NumContentIDs)
		if err != nil {
			return nil, nil, err
		}
		cut.Lane, cut.Play = l, p
		cuts[l] = cut
		out.Sessions = append(out.Sessions, s)
		out.Rows += len(s.Turns)
	}
	return out, cuts, nil
}

// recorded returns turn t's recorded start and end.
func recorded(s *Session, t int) (start, end vtime.Time) {
	start = s.Turns[t].ArrivalMs
	end = start
	if s.APIMs != nil {
		end += s.APIMs[t]
	}
	return start, end
}

// edgeOf returns dependency j of turn t as an explicit edge.
func edgeOf(s *Session, t, j int) Edge {
	if s.Edges != nil {
		return s.Edges[t][j]
	}
	tu := &s.Turns[t]
	return Edge{DelayMs: tu.DelayMs + tu.ToolWaitMs}
}

// cutAt is a sampled cut: uniformly in 25-75 % of the span for u in [0, 1).
func cutAt(u float64) func(first, last vtime.Time) vtime.Time {
	return func(first, last vtime.Time) vtime.Time { return first + vtime.Time(0.25+0.5*u)*(last-first) }
}

// fromStart is the cut of a whole play: its first recorded start.
func fromStart(first, _ vtime.Time) vtime.Time { return first }

func snapshotPlay(src *Session, prefix string, at func(first, last vtime.Time) vtime.Time, offset uint32) (Session, Cut, error) {
	n := len(src.Turns)
	first, last := vtime.Never, -vtime.Never
	for t := range n {
		st, _ := recorded(src, t)
		first, last = min(first, st), max(last, st)
	}
	tStar := at(first, last)
	cut := Cut{TStarMs: tStar, FirstMs: first, LastMs: last, Earliest: -1}
	hist := make([]bool, n)
	for t := range n {
		st, _ := recorded(src, t)
		hist[t] = st < tStar
	}
	live := make([]int32, n) // new index + 1, 0 for history
	for t := range n {
		if hist[t] {
			for _, d := range src.Turns[t].Deps {
				if !hist[d] {
					return Session{}, cut, fmt.Errorf("play %s: the snapshot cut at %v ms leaves historical request %s waiting for live request %s",
						src.ID, tStar, src.Turns[t].RequestID, src.Turns[d].RequestID)
				}
			}
			cut.History++
			continue
		}
		cut.Live++
		live[t] = int32(cut.Live)
		if st, _ := recorded(src, t); cut.Earliest < 0 || st < src.Turns[cut.Earliest].ArrivalMs {
			cut.Earliest = t
		}
	}
	s := Session{ID: prefix + src.ID, Turns: make([]Turn, 0, cut.Live), Edges: make([][]Edge, 0, cut.Live)}
	if src.Conv != nil {
		s.Conv = make([]int32, 0, cut.Live)
	}
	for t := range n {
		if hist[t] {
			continue
		}
		tu := src.Turns[t] // a copy
		st, _ := recorded(src, t)
		timer := max(st-tStar, 0)
		var deps []int32
		var edges []Edge
		for j, d := range src.Turns[t].Deps {
			e := edgeOf(src, t, j)
			if !hist[d] {
				deps, edges = append(deps, live[d]-1), append(edges, e)
				continue
			}
			ds, de := recorded(src, int(d))
			trigger := de
			if e.OnDispatch {
				trigger = ds
			}
			timer = max(timer, trigger+e.DelayMs-tStar)
		}
		tu.RequestID = prefix + tu.RequestID
		tu.Deps, tu.DelayMs, tu.ToolWaitMs, tu.ArrivalMs = deps, 0, 0, timer
		tu.Content = make([]uint32, len(src.Turns[t].Content))
		for k, c := range src.Turns[t].Content {
			tu.Content[k] = c + offset
		}
		s.Turns = append(s.Turns, tu)
		s.Edges = append(s.Edges, edges)
		if src.Conv != nil {
			s.Conv = append(s.Conv, src.Conv[t])
		}
	}
	cut.Primers = primers(src, hist)
	return s, cut, nil
}

// primers are, for each conversation with live requests, its historical
// request of latest recorded start (ties: the later in topological order,
// then in the play), in conversation order.
func primers(src *Session, hist []bool) []int {
	conv := func(t int) int32 {
		if src.Conv == nil {
			return 0
		}
		return src.Conv[t]
	}
	rank := topoRank(src)
	last := map[int32]int{}
	liveConv := map[int32]bool{}
	for t := range src.Turns {
		c := conv(t)
		if !hist[t] {
			liveConv[c] = true
			continue
		}
		p, ok := last[c]
		if !ok {
			last[c] = t
			continue
		}
		st, _ := recorded(src, t)
		sp, _ := recorded(src, p)
		if st > sp || st == sp && rank[t] > rank[p] {
			last[c] = t
		}
	}
	var convs []int32
	for c := range liveConv {
		if _, ok := last[c]; ok {
			convs = append(convs, c)
		}
	}
	slices.Sort(convs)
	out := make([]int, len(convs))
	for i, c := range convs {
		out[i] = last[c]
	}
	return out
}

// topoRank orders a play's turns topologically, the smallest ready index
// first (Kahn's algorithm, as aisimulate ranks its nodes).
func topoRank(s *Session) []int {
	n := len(s.Turns)
	waiting := make([]int, n)
	dependents := make([][]int, n)
	for t := range n {
		waiting[t] = len(s.Turns[t].Deps)
		for _, d := range s.Turns[t].Deps {
			dependents[d] = append(dependents[d], t)
		}
	}
	var ready []int
	for t := range n {
		if waiting[t] == 0 {
			ready = append(ready, t)
		}
	}
	rank := make([]int, n)
	for k := 0; len(ready) > 0; k++ {
		i := slices.Index(ready, slices.Min(ready))
		t := ready[i]
		ready = slices.Delete(ready, i, i+1)
		rank[t] = k
		for _, d := range dependents[t] {
			if waiting[d]--; waiting[d] == 0 {
				ready = append(ready, d)
			}
		}
	}
	return rank
}

// WarmupRequests is the number of warmup requests per lane
// (docs/model/agentic.md ("Warmup")).
const WarmupRequests = 10

// Preparation returns each lane's preparation play for agentic_warmup: its
// primers (the full input of each cut's primer request, one output token),
// then WarmupRequests warmup requests of one output token that repeat the
// primer inputs in order, or the earliest live request's input when the
// lane has no primer; each request waits for the previous one's completion
// with no delay. Content ids are the lane's instance ids (see Snapshot).
// A lane with nothing live has no preparation.
func Preparation(src *Workload, cuts []Cut) []Session {
	out := make([]Session, len(cuts))
	for l, c := range cuts {
		play := &src.Sessions[c.Play]
		inputs := c.Primers
		if len(inputs) == 0 && c.Earliest >= 0 {
			inputs = []int{c.Earliest}
		}
		s := Session{ID: "lane" + strconv.Itoa(l) + ":preparation"}
		if len(inputs) > 0 {
			n := len(c.Primers) + WarmupRequests
			s.Turns, s.Edges = make([]Turn, n), make([][]Edge, n)
			for k := range n {
				from, kind, idx := inputs[0], "primer", k
				if k < len(c.Primers) {
					from = c.Primers[k]
				} else {
					idx = k - len(c.Primers)
					from, kind = inputs[idx%len(inputs)], "warmup"
				}
				t := prepTurn(&play.Turns[from], uint32(l)*src.NumContentIDs)
				t.RequestID = s.ID + ":" + kind + ":" + strconv.Itoa(idx)
				if k > 0 {
					t.Deps, s.Edges[k] = []int32{int32(k - 1)}, []Edge{{}}
				}
				s.Turns[k] = t
			}
		}
		out[l] = s
	}
	return out
}

// prepTurn is a preparation request repeating src's whole input with one
// output token.
func prepTurn(src *Turn, offset uint32) Turn {
	t := Turn{RunLength: src.RunLength, ContentLength: src.ContentLength, OutputLength: 1, Line: src.Line,
		Content: make([]uint32, len(src.Content))}
	for k, c := range src.Content {
		t.Content[k] = c + offset
	}
	return t
}

// Instances returns count whole-play instances for an agentic profile's
// replacement plays: instance k (k = 0 …) is the play (first+k) mod
// len(w.Sessions) from its first request (aisimulate's
// prepare_play_from_start), named "play<first+k>:…", with its own content
// ids (ids + (first+k) × w.NumContentIDs). Timers are from the instance's
// start, as in Snapshot.
func Instances(w *Workload, first, count int) ([]Session, error) {
	if uint64(first+count)*uint64(w.NumContentIDs) > uint64(GeneratedTokenBase) {
		return nil, fmt.Errorf("%d play instances of %d content ids each exceed the %d token ids available",
			first+count, w.NumContentIDs, GeneratedTokenBase)
	}
	out := make([]Session, count)
	for k := range count {
		inst := first + k
		s, _, err := snapshotPlay(&w.Sessions[inst%len(w.Sessions)], "play"+strconv.Itoa(inst)+":", fromStart,
			uint32(inst)*w.NumContentIDs)
		if err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}
