package trace

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kvsim/kvsim/core/vtime"
)

// Lowering of one weka session into a play, step by step as aisimulate's
// lower_trace (docs/model/agentic.md ("Weka traces") lists the rules).

type wekaFork struct {
	parent int // chain index, -1 for none
	source string
	depth  int
	t      float64
}

type wekaChain struct {
	reqs        []*wekaReq
	fork        *wekaFork
	splicedInto int // -1 unless spliced
	tailSource  string
	tailHashes  []uint64
	tailEnd     float64
	tailModel   string
}

type wekaStream struct {
	session    string
	reqs       []*wekaReq
	forkSource string
	scope      string
}

type wekaDep struct {
	from       string // source id
	delay      float64
	onDispatch bool
	relation   int
}

type wekaHashKey struct {
	play int
	hash uint64
}

// wekaIDs interns a play's hash ids (hash_id_scope local: one namespace per
// session object) and hands out private ids for missing and partial blocks.
type wekaIDs struct {
	byHash map[wekaHashKey]uint32
	n      uint32
}

func (ids *wekaIDs) fresh() uint32 { ids.n++; return ids.n - 1 }

func (ids *wekaIDs) of(play int, h uint64) uint32 {
	k := wekaHashKey{play, h}
	if id, ok := ids.byHash[k]; ok {
		return id
	}
	id := ids.fresh()
	ids.byHash[k] = id
	return id
}

func appendChain(c *wekaChain, r *wekaReq) {
	if len(r.hashes) > 0 {
		c.tailSource, c.tailHashes, c.tailEnd, c.tailModel = r.sourceID, r.hashes, wekaEnd(r), r.model
	}
	c.reqs = append(c.reqs, r)
}

// extensionTarget is the chain with the longest tail that r's hashes
// extend (same model, tail ended by r's start).
func extensionTarget(chains []*wekaChain, r *wekaReq) int {
	best, bestLen := -1, 0
	for i, c := range chains {
		n := len(c.tailHashes)
		if n == 0 || n > len(r.hashes) || n <= bestLen || c.tailModel != r.model ||
			c.tailEnd > r.t+wekaJoinEpsilon || !slices.Equal(c.tailHashes, r.hashes[:n]) {
			continue
		}
		best, bestLen = i, n
	}
	return best
}

func maxLCPChain(chains []*wekaChain, hashes []uint64) (int, int) {
	best, bestDepth, bestLen := -1, 0, 0
	for i, c := range chains {
		depth := lcp(c.tailHashes, hashes)
		if depth > 0 && (depth > bestDepth || depth == bestDepth && len(c.tailHashes) > bestLen) {
			best, bestDepth, bestLen = i, depth, len(c.tailHashes)
		}
	}
	return best, bestDepth
}

type wekaDetection struct {
	chains  []*wekaChain
	main    int
	workers []int
}

func detectChains(reqs []*wekaReq) wekaDetection {
	slices.SortFunc(reqs, wekaOrder)
	var chains []*wekaChain
	chainOf := map[string]int{}
	forks := map[string][]int{}
	bySource := map[string]*wekaReq{}
	newChain := func(f *wekaFork) int {
		chains = append(chains, &wekaChain{fork: f, splicedInto: -1})
		return len(chains) - 1
	}
	for _, r := range reqs {
		bySource[r.sourceID] = r
		if len(r.hashes) == 0 {
			if len(chains) == 0 {
				newChain(nil)
			}
			chainOf[r.sourceID] = 0
			chains[0].reqs = append(chains[0].reqs, r)
			continue
		}
		if len(chains) == 0 {
			newChain(nil)
			chainOf[r.sourceID] = 0
			appendChain(chains[0], r)
			continue
		}
		if t := extensionTarget(chains, r); t >= 0 {
			chainOf[r.sourceID] = t
			appendChain(chains[t], r)
			continue
		}
		if !slices.ContainsFunc(chains, func(c *wekaChain) bool { return len(c.tailHashes) > 0 }) {
			chainOf[r.sourceID] = 0
			appendChain(chains[0], r)
			continue
		}
		parent, depth := maxLCPChain(chains, r.hashes)
		source := ""
		if parent >= 0 {
			source = chains[parent].tailSource
		}
		i := newChain(&wekaFork{parent: parent, source: source, depth: depth, t: r.t})
		chainOf[r.sourceID] = i
		appendChain(chains[i], r)
		if source != "" && depth > 0 {
			forks[source] = append(forks[source], i)
		}
	}
	resolveSeams(chains, forks, chainOf, bySource)

	det := wekaDetection{chains: chains, main: 0}
	resolve := func(i int) int {
		for chains[i].splicedInto >= 0 {
			i = chains[i].splicedInto
		}
		return i
	}
	first := -1
	for i, c := range chains {
		if c.splicedInto < 0 && (first < 0 || wekaOrder(c.reqs[0], chains[first].reqs[0]) < 0) {
			first = i
		}
	}
	if first >= 0 {
		det.main = resolve(first)
	}
	for i, c := range chains {
		if c.splicedInto < 0 && i != det.main {
			det.workers = append(det.workers, i)
		}
	}
	slices.SortStableFunc(det.workers, func(a, b int) int { return wekaOrder(chains[a].reqs[0], chains[b].reqs[0]) })
	return det
}

// resolveSeams splices a forked chain back into the chain it forked from
// when it continues that chain's tail (resolve_seams).
func resolveSeams(chains []*wekaChain, forks map[string][]int, chainOf map[string]int, bySource map[string]*wekaReq) {
	keys := map[string]bool{}
	for k := range forks {
		keys[k] = true
	}
	processed := map[string]bool{}
	for len(keys) > 0 {
		var src string
		for k := range keys {
			if src == "" || k < src {
				src = k
			}
		}
		delete(keys, src)
		if processed[src] {
			continue
		}
		processed[src] = true
		owner := chainOf[src]
		for chains[owner].splicedInto >= 0 {
			owner = chains[owner].splicedInto
		}
		if chains[owner].tailSource != src {
			continue
		}
		tail := bySource[src]
		var registered []int
		for _, i := range forks[src] {
			if chains[i].splicedInto < 0 {
				registered = append(registered, i)
			}
		}
		elected := -1
		for _, i := range registered {
			if !seamEligible(chains[i], tail) {
				continue
			}
			if elected < 0 || seamBetter(chains, i, elected) {
				elected = i
			}
		}
		if elected < 0 {
			continue
		}
		o, e := chains[owner], chains[elected]
		for _, r := range e.reqs {
			chainOf[r.sourceID] = owner
		}
		o.reqs = append(o.reqs, e.reqs...)
		e.reqs = nil
		o.tailSource, o.tailHashes, o.tailEnd, o.tailModel = e.tailSource, e.tailHashes, e.tailEnd, e.tailModel
		e.splicedInto = owner
		if o.tailSource == "" {
			continue
		}
		newTail := bySource[o.tailSource]
		for _, c := range registered {
			if c == elected || chains[c].splicedInto >= 0 {
				continue
			}
			first := chains[c].reqs[0]
			if newTail.t > first.t+wekaJoinEpsilon {
				continue
			}
			depth := lcp(o.tailHashes, first.hashes)
			if depth == 0 {
				continue
			}
			f := chains[c].fork
			f.parent, f.source, f.depth = owner, o.tailSource, depth
			forks[o.tailSource] = append(forks[o.tailSource], c)
			delete(processed, o.tailSource)
			keys[o.tailSource] = true
		}
	}
}

// seamBetter orders seam candidates: deeper fork, then earlier fork, then
// lower chain index.
func seamBetter(chains []*wekaChain, a, b int) bool {
	fa, fb := chains[a].fork, chains[b].fork
	if fa.depth != fb.depth {
		return fa.depth > fb.depth
	}
	if fa.t != fb.t {
		return fa.t < fb.t
	}
	return a < b
}

func seamEligible(c *wekaChain, tail *wekaReq) bool {
	f := c.fork
	if f == nil || f.depth == 0 || len(c.reqs) == 0 {
		return false
	}
	first := c.reqs[0]
	gap := first.t - wekaEnd(tail)
	overlap := float64(f.depth) / float64(max(len(tail.hashes), 1))
	return wekaEnd(tail) <= first.t+wekaJoinEpsilon && first.model == tail.model &&
		!(gap > wekaSeamMaxGap && overlap < wekaSeamMinRatio)
}

// splitPreamble sets apart a first request that shares no prefix with any
// later one (split_preamble).
func splitPreamble(reqs []*wekaReq) (pre, rest []*wekaReq) {
	slices.SortFunc(reqs, wekaOrder)
	if len(reqs) < 2 || len(reqs[0].hashes) == 0 {
		return nil, reqs
	}
	first := reqs[0]
	for _, o := range reqs[1:] {
		if lcp(first.hashes, o.hashes) > 0 {
			return nil, reqs
		}
	}
	if first.out > wekaPreambleOut {
		other := map[uint64]bool{}
		for _, o := range reqs[1:] {
			for _, h := range o.hashes {
				other[h] = true
			}
		}
		for _, h := range first.hashes {
			if other[h] {
				return nil, reqs
			}
		}
	}
	return []*wekaReq{first}, reqs[1:]
}

func streamsFrom(prefix string, det wekaDetection, pre []*wekaReq) []*wekaStream {
	mainReqs := append(slices.Clone(det.chains[det.main].reqs), pre...)
	slices.SortFunc(mainReqs, wekaOrder)
	forkOf := func(c *wekaChain) string {
		if c.fork == nil {
			return ""
		}
		return c.fork.source
	}
	scope := "scope:" + prefix
	out := []*wekaStream{{session: prefix, reqs: mainReqs, forkSource: forkOf(det.chains[det.main]), scope: scope}}
	for k, i := range det.workers {
		c := det.chains[i]
		out = append(out, &wekaStream{session: fmt.Sprintf("%s:worker:%d", prefix, k), reqs: slices.Clone(c.reqs),
			forkSource: forkOf(c), scope: scope})
	}
	return out
}

// wekaDeps collects each request's dependencies, dropping repeats of the
// same (source, trigger, relation) as push_dependency does.
type wekaDeps map[string][]wekaDep

func (m wekaDeps) push(to string, d wekaDep) {
	for _, e := range m[to] {
		if e.from == d.from && e.onDispatch == d.onDispatch && e.relation == d.relation {
			return
		}
	}
	m[to] = append(m[to], d)
}

// canonicalNested turns an inner timestamp into a play timestamp.
func (d *wekaDecoder) canonicalNested(r *wekaReq, s *wekaSub, basis string) *Error {
	if basis == BasisRelative {
		r.t += s.t
		if math.IsInf(r.t, 0) {
			return d.errAt(r.v.get("t"), join(r.path, "t"), "the timestamp overflows when made absolute")
		}
		return nil
	}
	if r.t < s.t-wekaJoinEpsilon {
		return d.errAt(r.v.get("t"), join(r.path, "t"), fmt.Sprintf(
			"inner request timestamp %v precedes its subagent marker timestamp %v under the absolute nested_timestamp_basis", r.t, s.t))
	}
	r.t = max(r.t, s.t)
	return nil
}

func subagentEnd(s *wekaSub) float64 {
	if !math.IsNaN(s.duration) {
		return s.t + s.duration
	}
	end := s.t
	for _, r := range s.reqs {
		end = max(end, wekaEnd(r))
	}
	return end
}

// lowerWeka builds the play of one session object.
func lowerWeka(d *wekaDecoder, tr *wekaTrace, play int, basis string, ids *wekaIDs) (Session, error) {
	var top []*wekaReq
	var subs []*wekaSub
	for _, e := range tr.entries {
		if e.req != nil {
			top = append(top, e.req)
		} else {
			subs = append(subs, e.sub)
		}
	}
	if len(top) == 0 {
		return Session{}, d.errAt(tr.v, "requests", "the session has no parent requests")
	}
	pre, rest := splitPreamble(top)
	streams := streamsFrom(wekaRootSessionID, detectChains(rest), pre)
	parents := len(streams)
	var joins []wekaJoin
	outerOf := func(s *wekaSub) int { return subOuter(tr, s) }
	for _, s := range subs {
		outer := outerOf(s)
		var owner *wekaReq
		ownerStream := -1
		for si, st := range streams[:parents] {
			for _, r := range st.reqs {
				if r.order < outer && (owner == nil || r.order > owner.order) {
					owner, ownerStream = r, si
				}
			}
		}
		if owner == nil {
			return Session{}, d.errAt(s.v, s.path, fmt.Sprintf("subagent %s has no preceding parent request", s.agentID))
		}
		for _, r := range s.reqs {
			if err := d.canonicalNested(r, s, basis); err != nil {
				return Session{}, err
			}
		}
		if len(s.reqs) == 0 {
			continue
		}
		cpre, crest := splitPreamble(slices.Clone(s.reqs))
		prefix := fmt.Sprintf("subagent:%d:%s", outer, s.agentID)
		child := streamsFrom(prefix, detectChains(crest), cpre)
		child[0].forkSource = owner.sourceID
		for _, c := range child {
			c.scope = child[0].session
		}
		target := ""
		if s.status == "completed" {
			end := subagentEnd(s)
			var best *wekaReq
			for _, r := range streams[ownerStream].reqs {
				if r.order > outer && r.t+wekaJoinEpsilon >= end && (best == nil || r.order < best.order) {
					best = r
				}
			}
			if best != nil {
				target = best.sourceID
			}
		}
		streams = append(streams, child...)
		if target != "" {
			var terms []string
			for _, c := range child {
				if len(c.reqs) > 0 {
					terms = append(terms, c.reqs[len(c.reqs)-1].sourceID)
				}
			}
			if len(terms) > 0 {
				joins = append(joins, wekaJoin{target, terms})
			}
		}
	}
	return buildWekaPlay(tr, play, streams, joins, ids), nil
}

// A wekaJoin makes target wait for the last request of every stream of a
// blocking subagent.
type wekaJoin struct {
	target    string
	terminals []string
}

// subOuter is the outer index of subagent s in its session.
func subOuter(tr *wekaTrace, s *wekaSub) int {
	for i, e := range tr.entries {
		if e.sub == s {
			return i
		}
	}
	return -1
}

// buildWekaPlay installs the dependencies and emits the play's turns,
// ordered by request id as aisimulate sorts its rows.
func buildWekaPlay(tr *wekaTrace, play int, streams []*wekaStream, joins []wekaJoin, ids *wekaIDs) Session {
	bySource := map[string]*wekaReq{}
	rootTime := math.Inf(1)
	for _, st := range streams {
		for _, r := range st.reqs {
			bySource[r.sourceID] = r
			rootTime = min(rootTime, r.t)
		}
	}
	deps := wekaDeps{}
	for _, st := range streams {
		for i := 1; i < len(st.reqs); i++ {
			p, r := st.reqs[i-1], st.reqs[i]
			deps.push(r.sourceID, wekaDep{from: p.sourceID, delay: r.t - wekaEnd(p), relation: relSequence})
		}
	}
	for _, st := range streams {
		if len(st.reqs) == 0 || st.forkSource == "" {
			continue
		}
		first, parent := st.reqs[0], bySource[st.forkSource]
		if first.t < wekaEnd(parent) {
			deps.push(first.sourceID, wekaDep{from: parent.sourceID, delay: first.t - parent.t, onDispatch: true, relation: relSpawn})
		} else {
			deps.push(first.sourceID, wekaDep{from: parent.sourceID, delay: first.t - wekaEnd(parent), relation: relSpawn})
		}
	}
	installFrontiers(streams, deps)
	for _, j := range joins {
		target := bySource[j.target]
		for _, term := range j.terminals {
			deps.push(target.sourceID, wekaDep{from: term, delay: target.t - wekaEnd(bySource[term]), relation: relJoin})
		}
	}
	root := streams[0].reqs[0]
	for _, st := range streams {
		if len(st.reqs) == 0 {
			continue
		}
		first := st.reqs[0]
		if first == root || len(deps[first.sourceID]) > 0 {
			continue
		}
		deps.push(first.sourceID, wekaDep{from: root.sourceID, delay: first.t - root.t, onDispatch: true, relation: relSpawn})
	}

	var all []*wekaReq
	for _, st := range streams {
		all = append(all, st.reqs...)
	}
	slices.SortFunc(all, func(a, b *wekaReq) int { return strings.Compare(a.sourceID, b.sourceID) })
	index := make(map[string]int32, len(all))
	for i, r := range all {
		index[r.sourceID] = int32(i)
	}
	s := Session{ID: tr.id, Turns: make([]Turn, len(all)), Edges: make([][]Edge, len(all)),
		APIMs: make([]vtime.Time, len(all)), Conv: make([]int32, len(all))}
	conv := map[string]int32{}
	for k, st := range streams {
		for _, r := range st.reqs {
			conv[r.sourceID] = int32(k)
		}
	}
	for i, r := range all {
		t := &s.Turns[i]
		t.RequestID = tr.id + ":" + r.sourceID
		t.Content = wekaContent(r, tr.blockSize, play, ids)
		t.RunLength, t.ContentLength, t.OutputLength = tr.blockSize, r.in, r.out
		t.Line = r.v.line
		for _, dep := range deps[r.sourceID] {
			t.Deps = append(t.Deps, index[dep.from])
			s.Edges[i] = append(s.Edges[i], Edge{DelayMs: wekaMs(dep.delay), OnDispatch: dep.onDispatch})
		}
		// Every request keeps its recorded start as a not-before gate
		// (aisimulate's not_before_ms); a root arrives at it.
		t.ArrivalMs = wekaMs(r.t - rootTime)
		s.APIMs[i] = wekaMs(r.apiTime)
		s.Conv[i] = conv[r.sourceID]
	}
	return s
}

// installFrontiers adds replay barriers: in each scope, a request waits for
// the latest request of every other stream that started before it and
// ended by its start, pruned of those a later frontier member covers.
func installFrontiers(streams []*wekaStream, deps wekaDeps) {
	var scopes []string
	for _, st := range streams {
		if !slices.Contains(scopes, st.scope) {
			scopes = append(scopes, st.scope)
		}
	}
	slices.Sort(scopes)
	for _, scope := range scopes {
		var in []*wekaStream
		for _, st := range streams {
			if st.scope == scope {
				in = append(in, st)
			}
		}
		for _, target := range in {
			for _, r := range target.reqs {
				var frontier []*wekaReq
				for _, other := range in {
					if other == target {
						continue
					}
					var latest *wekaReq
					for _, c := range other.reqs {
						if c.t < r.t && wekaEnd(c) <= r.t+wekaJoinEpsilon && (latest == nil || frontierLater(c, latest)) {
							latest = c
						}
					}
					if latest != nil {
						frontier = append(frontier, latest)
					}
				}
				for _, c := range frontier {
					covered := slices.ContainsFunc(frontier, func(l *wekaReq) bool {
						return c.t < l.t && wekaEnd(c) <= l.t+wekaJoinEpsilon
					})
					if !covered {
						deps.push(r.sourceID, wekaDep{from: c.sourceID, relation: relBarrier})
					}
				}
			}
		}
	}
}

func frontierLater(a, b *wekaReq) bool {
	if c := cmpFloat(wekaEnd(a), wekaEnd(b)); c != 0 {
		return c > 0
	}
	if c := cmpFloat(a.t, b.t); c != 0 {
		return c > 0
	}
	return a.sourceID > b.sourceID
}

// wekaContent is a request's prompt: one id per full block (the play's
// hash id, or a private id when hash_ids is short) and a private id for a
// partial last block, so that partial blocks are never shared.
func wekaContent(r *wekaReq, bs, play int, ids *wekaIDs) []uint32 {
	full := r.in / bs
	out := make([]uint32, 0, full+1)
	for i := range full {
		if i < len(r.hashes) {
			out = append(out, ids.of(play, r.hashes[i]))
		} else {
			out = append(out, ids.fresh())
		}
	}
	if r.in%bs != 0 {
		out = append(out, ids.fresh())
	}
	return out
}
