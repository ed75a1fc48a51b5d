package placement

import (
	"math"
	"math/rand/v2"
)

// kvRouter follows Dynamo's KV router (docs/model/engine.md ("KV router")):
// for each rank, with its overlap and load at the routing instant,
//
//	fresh          = max(0, Tokens − G1·bs − w_h·Host·bs)
//	prefill blocks = (PrefillTokens + fresh) / bs
//	decode blocks  = ActiveBlocks + len(Blocks) − G1Active
//	logit          = overlap_score_weight × prefill blocks + decode blocks
//
// and the lowest logit wins. With temperature 0, equal logits go to the
// rank with the fewest cached G1 blocks (Dynamo's tree size), then to a
// seeded uniform draw; with a positive temperature the rank is drawn from
// the softmax of the logits normalised to [0, 1].
type kvRouter struct {
	p   Params
	rng *rand.Rand
	// buffers reused between requests
	logits   []float64
	overlaps []Overlap
	works    []Work
	tied     []int
}

func newKVRouter(p Params) *kvRouter {
	return &kvRouter{p: p, rng: rand.New(rand.NewPCG(p.Seed, seedStream))}
}

// seedStream is the PCG stream of the router's draws.
const seedStream = 0x726f75746572 // "router"

// Fresh is the prompt tokens a rank with overlap o would compute for req
// (Dynamo's adjusted prefill tokens; G2 blocks count w_h of a block each).
func (p Params) Fresh(req *Request, o Overlap) float64 {
	bs := float64(p.BlockSize)
	return math.Max(0, float64(req.Tokens)-float64(o.G1)*bs-p.HostOverlapWeight*float64(o.Host)*bs)
}

// Logit is the kv_router's cost of sending req to a rank with work w and
// overlap o (lower is better).
func (p Params) Logit(req *Request, w Work, o Overlap) float64 {
	prefill := (float64(w.PrefillTokens) + p.Fresh(req, o)) / float64(p.BlockSize)
	decode := float64(w.ActiveBlocks + len(req.Blocks) - o.G1Active)
	return p.OverlapScoreWeight*prefill + decode
}

func (k *kvRouter) Route(req *Request, v View) Choice {
	n := v.Len()
	k.logits, k.overlaps, k.works = k.logits[:0], k.overlaps[:0], k.works[:0]
	for i := range n {
		o, w := v.Overlap(i, req.Blocks), v.Work(i)
		k.overlaps, k.works = append(k.overlaps, o), append(k.works, w)
		k.logits = append(k.logits, k.p.Logit(req, w, o))
	}
	var i int
	if k.p.Temperature > 0 && n > 1 {
		i = Softmax(k.logits, k.p.Temperature, k.rng.Float64())
	} else {
		i = k.lowest()
	}
	return Choice{Index: i, Target: v.Target(i), Scored: true, Overlap: k.overlaps[i],
		Fresh: int(k.p.Fresh(req, k.overlaps[i]))}
}

// lowest returns the candidate with the lowest logit; among equals the one
// with the fewest cached G1 blocks, then a seeded uniform draw (consumed
// only when such a tie remains).
func (k *kvRouter) lowest() int {
	k.tied = k.tied[:0]
	best, bestCached := math.Inf(1), 0
	for i, l := range k.logits {
		c := k.works[i].CachedBlocks
		switch {
		case l < best || l == best && c < bestCached:
			best, bestCached = l, c
			k.tied = append(k.tied[:0], i)
		case l == best && c == bestCached:
			k.tied = append(k.tied, i)
		}
	}
	if len(k.tied) == 1 {
		return k.tied[0]
	}
	return k.tied[int(k.rng.Float64()*float64(len(k.tied)))]
}

// Softmax draws a candidate for the uniform draw u in [0, 1) as Dynamo's
// router does: logits are normalised to [0, 1] by their range, the
// probability of i is proportional to exp(−(logit_i − min) / ((max − min)
// × temperature)), and the first i whose cumulative probability reaches u
// wins (the last one if rounding leaves u above the sum). Equal logits are
// drawn uniformly.
func Softmax(logits []float64, temperature, u float64) int {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range logits {
		lo, hi = math.Min(lo, l), math.Max(hi, l)
	}
	w := make([]float64, len(logits))
	sum := 0.0
	for i, l := range logits {
		w[i] = 1
		if hi > lo {
			w[i] = expNeg(-(l - lo) / ((hi - lo) * temperature))
		}
		sum += w[i]
	}
	cum := 0.0
	for i := range w {
		cum += w[i] / sum
		if u <= cum {
			return i
		}
	}
	return len(w) - 1
}
