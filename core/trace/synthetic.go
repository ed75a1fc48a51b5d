package trace

import (
	"math"
	"strconv"

	"github.com/kvsim/kvsim/core/vtime"
)

// SyntheticSpec is traffic.source of type synthetic
// (docs/model/config.md ("Traffic settings")).
type SyntheticSpec struct {
	InputTokens        int
	OutputTokens       int
	CachedPrefixTokens int
	Requests           int
	EngineBlockSize    int
}

// Synthetic builds Requests independent one-turn sessions of InputTokens
// prompt tokens and OutputTokens output tokens. The first
// CachedPrefixTokens tokens are identical in every request; every other
// prompt token is unique to its request (output tokens are left to the
// engine's generator, which never reuses ids).
//
// Encoding, as aisimulate's Trace::synthetic (trace.rs) with the engine
// block size as its block size: each content id stands for one engine
// block (RunLength = EngineBlockSize); the cached-prefix blocks carry the
// same ids in every request and every later block a fresh id. If
// CachedPrefixTokens is not a multiple of the block size (config
// validation rejects that; aisimulate too) RunLength becomes
// gcd(block size, CachedPrefixTokens) so the shared prefix is still exactly
// CachedPrefixTokens tokens. Sessions are named "session_<i>" like
// aisimulate's; RequestID is empty (the engine derives one) and arrivals
// are 0 (the load model schedules synthetic arrivals).
//
// Out-of-range fields never panic: negative counts are treated as 0, a
// non-positive block size as 1 and the prefix is clamped to the input.
func Synthetic(s SyntheticSpec) *Workload {
	bs := max(s.EngineBlockSize, 1)
	in := max(s.InputTokens, 0)
	prefix := min(max(s.CachedPrefixTokens, 0), in)
	run := bs
	if prefix%bs != 0 {
		run = gcd(bs, prefix)
	}
	shared := prefix / run
	total := ceilDiv(in, run)
	n := max(s.Requests, 0)

	w := &Workload{Sessions: make([]Session, n), Rows: n}
	turns := make([]Turn, n)
	var ids arena
	next := uint32(shared)
	for i := range n {
		content := ids.alloc(total)
		for j := range shared {
			content[j] = uint32(j)
		}
		for j := shared; j < total; j++ {
			content[j] = next
			next++
		}
		turns[i] = Turn{
			Content:       content,
			RunLength:     run,
			ContentLength: in,
			OutputLength:  max(s.OutputTokens, 0),
		}
		w.Sessions[i] = Session{ID: "session_" + strconv.Itoa(i), Turns: turns[i : i+1 : i+1]}
	}
	if n > 0 {
		w.NumContentIDs = next // shared + n×fresh: every id is used
	}
	return w
}

// SessionSpec is traffic.source of type synthetic-session
// (docs/model/config.md ("Traffic settings")).
type SessionSpec struct {
	NewInputTokensPerTurn int
	OutputTokensPerTurn   int
	Turns                 int
	Sessions              int
	PrefixGroups          int
	EngineBlockSize       int
	SharedPrefixRatio     float64
	InterTurnDelayMs      vtime.Time
}

// SyntheticSessions builds Sessions sessions of Turns turns each, with
// Accumulate set: a turn's prompt is the previous prompt, the previous
// output and NewInputTokensPerTurn new tokens
// (docs/model/traffic.md ("Prompt construction"); new 8, output 2, 3 turns
// gives prompts of 8, 18 and 28 tokens).
//
// Each turn's new tokens follow aisimulate's Trace::synthetic (trace.rs),
// which aisimulate's predict path calls with the engine block size,
// seed 0 and one LengthSpec per turn, then replays with delta
// accumulation:
//   - the delta is ceil(new / block size) blocks, one content id per block
//     (RunLength = EngineBlockSize);
//   - when PrefixGroups > 0 and SharedPrefixRatio > 0, the first
//     min(round(blocks × ratio), blocks) blocks of every turn's delta carry
//     ids shared by all sessions of the session's group (the group id does
//     not depend on the turn, so every turn of a session starts its delta
//     with the same group blocks, as in aisimulate); the other blocks get
//     fresh ids. With a ratio but no groups, or groups but ratio 0, all
//     blocks are fresh, as there.
//   - Decision: aisimulate draws each session's group from a seeded
//     StdRng; kvsim assigns session i to group i mod PrefixGroups (the
//     round-robin rule aisimulate uses for applied_compute_agentic traces),
//     which gives every group its share without reproducing Rust's RNG.
//
// Turn 0 has delay 0, later turns InterTurnDelayMs (non-finite or negative
// values become 0; config validation rejects them). Sessions are named
// "session_<i>"; arrivals are 0 (the load model schedules them).
func SyntheticSessions(s SessionSpec) *Workload {
	bs := max(s.EngineBlockSize, 1)
	newTok := max(s.NewInputTokensPerTurn, 0)
	nTurns := max(s.Turns, 0)
	nSess := max(s.Sessions, 0)
	if nTurns == 0 {
		nSess = 0
	}
	blocks := ceilDiv(newTok, bs)
	ratio := s.SharedPrefixRatio
	if !(ratio > 0) {
		ratio = 0
	}
	ratio = min(ratio, 1)
	grouped := 0
	if s.PrefixGroups > 0 && ratio > 0 {
		grouped = min(int(math.Round(float64(blocks)*ratio)), blocks)
	}
	delay := s.InterTurnDelayMs
	if badMs(delay) {
		delay = 0
	}

	w := &Workload{Accumulate: true, Sessions: make([]Session, nSess), Rows: nSess * nTurns}
	turns := make([]Turn, nSess*nTurns)
	var ids arena
	var next uint32
	var groupIDs [][]uint32 // ids of each group's shared blocks, made on first use
	if grouped > 0 {
		groupIDs = make([][]uint32, min(s.PrefixGroups, nSess))
	}
	for i := range nSess {
		var group []uint32
		if grouped > 0 {
			g := i % s.PrefixGroups
			if groupIDs[g] == nil {
				groupIDs[g] = make([]uint32, grouped)
				for j := range groupIDs[g] {
					groupIDs[g][j] = next
					next++
				}
			}
			group = groupIDs[g]
		}
		st := turns[i*nTurns : (i+1)*nTurns : (i+1)*nTurns]
		for k := range st {
			content := ids.alloc(blocks)
			copy(content, group)
			for j := len(group); j < blocks; j++ {
				content[j] = next
				next++
			}
			var d vtime.Time
			if k > 0 {
				d = delay
			}
			st[k] = Turn{
				Content:       content,
				RunLength:     bs,
				ContentLength: newTok,
				OutputLength:  max(s.OutputTokensPerTurn, 0),
				DelayMs:       d,
			}
		}
		w.Sessions[i] = Session{ID: "session_" + strconv.Itoa(i), Turns: st}
	}
	w.NumContentIDs = next
	return w
}

func ceilDiv(a, b int) int {
	if a <= 0 {
		return 0
	}
	return (a-1)/b + 1
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
