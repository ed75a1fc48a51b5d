package trace

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/core/vtime"
)

// This file reads the weka format (docs/model/agentic.md ("Weka traces")):
// the AgentX corpus of kv-cache-tester, one session object per JSON value
// (a .jsonl file may hold several, a .json file one), with block_size,
// hash_id_scope "local" and nested requests, some of them subagent markers
// with their own requests. Each object becomes one play; its requests are
// lowered to a dependency graph as aisimulate's Weka importer does
// (crates/core/src/replay/loadgen/weka.rs, lower_trace): chains detected by
// hash-prefix extension, forks and seams, a preamble, subagent spawns and
// joins, cross-stream replay barriers, and anchors of disjoint streams to
// the root's dispatch. Dependencies carry their own delay and trigger
// (completion or dispatch), in Turn.Edges.

// Nested timestamp bases of the weka format (traffic.source.nested_timestamp_basis).
const (
	BasisAuto     = "auto"
	BasisAbsolute = "absolute"
	BasisRelative = "relative"
)

const (
	wekaJoinEpsilon   = 1e-6 // seconds
	wekaSeamMaxGap    = 3600.0
	wekaSeamMinRatio  = 0.5
	wekaPreambleOut   = 64
	relSequence       = 0
	relSpawn          = 1
	relJoin           = 2
	relBarrier        = 3
	wekaRootSessionID = "root"
)

type wekaReq struct {
	t        float64
	model    string
	in, out  int
	hashes   []uint64
	apiTime  float64
	v        *jval  // the request object
	path     string // its field path in the session object
	sourceID string
	order    int
}

type wekaSub struct {
	t        float64
	agentID  string
	status   string
	duration float64 // seconds; NaN when absent
	reqs     []*wekaReq
	v        *jval
	path     string
}

type wekaEntry struct {
	req *wekaReq
	sub *wekaSub
}

type wekaTrace struct {
	id        string
	blockSize int
	entries   []wekaEntry
	v         *jval
}

// wekaDecoder turns parsed values into wekaTrace, with positioned errors.
type wekaDecoder struct{ name string }

func (d *wekaDecoder) errAt(v *jval, path, msg string) *Error {
	return &Error{File: d.name, Line: v.line, Col: v.col, Path: path, Msg: msg}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// field returns obj[key]; a missing required key is an error at obj.
func (d *wekaDecoder) field(obj *jval, path, key string, required bool) (*jval, *Error) {
	v := obj.get(key)
	if v == nil || v.kind == jNull {
		if required {
			return nil, d.errAt(obj, join(path, key), "missing required field")
		}
		return nil, nil
	}
	return v, nil
}

func (d *wekaDecoder) str(obj *jval, path, key string, required bool) (string, *jval, *Error) {
	v, err := d.field(obj, path, key, required)
	if err != nil || v == nil {
		return "", v, err
	}
	if v.kind != jString {
		return "", v, d.errAt(v, join(path, key), "expected a string, got "+v.kind.String())
	}
	return v.str, v, nil
}

func (d *wekaDecoder) num(obj *jval, path, key string, required bool) (float64, *jval, *Error) {
	v, err := d.field(obj, path, key, required)
	if err != nil || v == nil {
		return math.NaN(), v, err
	}
	if v.kind != jNumber {
		return 0, v, d.errAt(v, join(path, key), "expected a number, got "+v.kind.String())
	}
	return v.num, v, nil
}

// count reads a non-negative integer.
func (d *wekaDecoder) count(obj *jval, path, key string, required bool) (int, *jval, *Error) {
	f, v, err := d.num(obj, path, key, required)
	if err != nil || v == nil {
		return 0, v, err
	}
	if f < 0 || f != math.Trunc(f) || f > 1<<31 {
		return 0, v, d.errAt(v, join(path, key), "expected a non-negative integer, got "+v.str)
	}
	return int(f), v, nil
}

func (d *wekaDecoder) session(v *jval) (*wekaTrace, *Error) {
	if v.kind != jObject {
		return nil, d.errAt(v, "", "expected a weka session object, got "+v.kind.String())
	}
	tr := &wekaTrace{v: v}
	id, idv, err := d.str(v, "", "id", true)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(id) == "" {
		return nil, d.errAt(idv, "id", "the session id must not be empty")
	}
	tr.id = id
	bs, bsv, err := d.count(v, "", "block_size", true)
	if err != nil {
		return nil, err
	}
	if bs == 0 {
		return nil, d.errAt(bsv, "block_size", "block_size must be positive")
	}
	tr.blockSize = bs
	scope, sv, err := d.str(v, "", "hash_id_scope", true)
	if err != nil {
		return nil, err
	}
	if scope != "local" {
		return nil, d.errAt(sv, "hash_id_scope", fmt.Sprintf("unsupported hash_id_scope %q; expected local", scope))
	}
	declared, err := d.models(v, "models")
	if err != nil {
		return nil, err
	}
	reqs, err := d.array(v, "", "requests")
	if err != nil {
		return nil, err
	}
	for i, e := range reqs.arr {
		p := "requests[" + strconv.Itoa(i) + "]"
		entry, err := d.entry(e, p, i, declared)
		if err != nil {
			return nil, err
		}
		tr.entries = append(tr.entries, entry)
	}
	return tr, nil
}

func (d *wekaDecoder) array(obj *jval, path, key string) (*jval, *Error) {
	v, err := d.field(obj, path, key, true)
	if err != nil {
		return nil, err
	}
	if v.kind != jArray {
		return nil, d.errAt(v, join(path, key), "expected an array, got "+v.kind.String())
	}
	return v, nil
}

// models reads a declared model list (nil when absent).
func (d *wekaDecoder) models(obj *jval, path string) ([]string, *Error) {
	v, err := d.field(obj, "", path, false)
	if err != nil || v == nil {
		return nil, err
	}
	if v.kind != jArray {
		return nil, d.errAt(v, path, "expected an array of model names, got "+v.kind.String())
	}
	var out []string // an empty declaration checks nothing, as in aisimulate
	for i, m := range v.arr {
		if m.kind != jString || strings.TrimSpace(m.str) == "" {
			return nil, d.errAt(m, elemField(path, i), "expected a nonempty model name")
		}
		out = append(out, m.str)
	}
	return out, nil
}

func (d *wekaDecoder) entry(v *jval, path string, outer int, declared []string) (wekaEntry, *Error) {
	if v.kind != jObject {
		return wekaEntry{}, d.errAt(v, path, "expected a request object, got "+v.kind.String())
	}
	typ, tv, err := d.str(v, path, "type", true)
	if err != nil {
		return wekaEntry{}, err
	}
	switch typ {
	case "n", "s":
		r, err := d.request(v, path, declared)
		if r != nil {
			r.sourceID, r.order = "outer:"+strconv.Itoa(outer), outer
		}
		return wekaEntry{req: r}, err
	case "subagent":
		s, err := d.subagent(v, path, outer, declared)
		return wekaEntry{sub: s}, err
	}
	return wekaEntry{}, d.errAt(tv, join(path, "type"), fmt.Sprintf("unknown request type %q (want n, s or subagent)", typ))
}

func (d *wekaDecoder) request(v *jval, path string, declared []string) (*wekaReq, *Error) {
	r := &wekaReq{v: v, path: path}
	var err *Error
	var fv *jval
	if r.t, fv, err = d.num(v, path, "t", true); err != nil {
		return nil, err
	} else if r.t < 0 {
		return nil, d.errAt(fv, join(path, "t"), "the timestamp must be finite and non-negative")
	}
	if r.model, fv, err = d.str(v, path, "model", true); err != nil {
		return nil, err
	} else if strings.TrimSpace(r.model) == "" {
		return nil, d.errAt(fv, join(path, "model"), "the request model must not be empty")
	} else if declared != nil && !slices.Contains(declared, r.model) {
		return nil, d.errAt(fv, join(path, "model"), fmt.Sprintf("model %q is absent from the session's models %q", r.model, declared))
	}
	if r.in, fv, err = d.count(v, path, "in", true); err != nil {
		return nil, err
	} else if r.in == 0 {
		return nil, d.errAt(fv, join(path, "in"), "a request must have input tokens")
	}
	if r.out, _, err = d.count(v, path, "out", true); err != nil {
		return nil, err
	}
	if r.apiTime, fv, err = d.num(v, path, "api_time", false); err != nil {
		return nil, err
	} else if fv == nil {
		r.apiTime = 0 // absent: a zero-width recorded interval
	} else if r.apiTime < 0 {
		return nil, d.errAt(fv, join(path, "api_time"), "api_time must be finite and non-negative")
	}
	hv, err := d.field(v, path, "hash_ids", false)
	if err != nil {
		return nil, err
	}
	if hv != nil {
		if hv.kind != jArray {
			return nil, d.errAt(hv, join(path, "hash_ids"), "expected an array of non-negative integers, got "+hv.kind.String())
		}
		r.hashes = make([]uint64, len(hv.arr))
		for i, h := range hv.arr {
			u, perr := strconv.ParseUint(h.str, 10, 64)
			if h.kind != jNumber || perr != nil {
				return nil, d.errAt(h, elemField(join(path, "hash_ids"), i), "expected a non-negative integer hash id")
			}
			r.hashes[i] = u
		}
	}
	return r, nil
}

func (d *wekaDecoder) subagent(v *jval, path string, outer int, declared []string) (*wekaSub, *Error) {
	s := &wekaSub{v: v, path: path, duration: math.NaN()}
	var err *Error
	var fv *jval
	if s.t, fv, err = d.num(v, path, "t", true); err != nil {
		return nil, err
	} else if s.t < 0 {
		return nil, d.errAt(fv, join(path, "t"), "the timestamp must be finite and non-negative")
	}
	if s.agentID, fv, err = d.str(v, path, "agent_id", true); err != nil {
		return nil, err
	} else if strings.TrimSpace(s.agentID) == "" {
		return nil, d.errAt(fv, join(path, "agent_id"), "agent_id must not be empty")
	}
	if _, _, err = d.str(v, path, "subagent_type", true); err != nil {
		return nil, err
	}
	if ms, fv, err := d.num(v, path, "duration_ms", false); err != nil {
		return nil, err
	} else if fv != nil {
		if ms < 0 || ms != math.Trunc(ms) {
			return nil, d.errAt(fv, join(path, "duration_ms"), "duration_ms must be a non-negative integer")
		}
		s.duration = ms / 1000
	}
	if s.status, fv, err = d.str(v, path, "status", true); err != nil {
		return nil, err
	} else if s.status != "completed" && s.status != "async_launched" {
		return nil, d.errAt(fv, join(path, "status"), fmt.Sprintf("unsupported non-success subagent status %q for %s (want completed or async_launched)", s.status, s.agentID))
	}
	reqs, err := d.array(v, path, "requests")
	if err != nil {
		return nil, err
	}
	if s.status == "completed" && len(reqs.arr) == 0 {
		return nil, d.errAt(reqs, join(path, "requests"), fmt.Sprintf("blocking subagent %s has no replayable requests; external waits are not modeled", s.agentID))
	}
	for i, e := range reqs.arr {
		p := join(path, "requests["+strconv.Itoa(i)+"]")
		if e.kind != jObject {
			return nil, d.errAt(e, p, "expected a request object, got "+e.kind.String())
		}
		typ, tv, err := d.str(e, p, "type", true)
		if err != nil {
			return nil, err
		}
		if typ != "n" && typ != "s" {
			return nil, d.errAt(tv, join(p, "type"), fmt.Sprintf("unknown request type %q inside a subagent (want n or s)", typ))
		}
		r, err := d.request(e, p, declared)
		if err != nil {
			return nil, err
		}
		r.sourceID, r.order = "outer:"+strconv.Itoa(outer)+":inner:"+strconv.Itoa(i), i
		s.reqs = append(s.reqs, r)
	}
	return s, nil
}

// readWeka parses a weka corpus into an agentic Workload.
func readWeka(name string, data []byte, opt Options) (*Workload, error) {
	switch opt.NestedTimestampBasis {
	case "", BasisAuto, BasisAbsolute, BasisRelative:
	default:
		return nil, &Error{File: name, Path: "nested_timestamp_basis", Msg: fmt.Sprintf(
			"unknown nested_timestamp_basis %q (want auto, absolute or relative)", opt.NestedTimestampBasis)}
	}
	p := newJParser(name, data)
	d := &wekaDecoder{name: name}
	var traces []*wekaTrace
	for {
		v, err := p.next()
		if err != nil {
			return nil, err
		}
		if v == nil {
			break
		}
		if len(traces) > 0 && strings.HasSuffix(strings.ToLower(name), ".json") {
			return nil, d.errAt(v, "", "a .json weka source holds one session object; use a .jsonl file for several")
		}
		tr, err := d.session(v)
		if err != nil {
			return nil, err
		}
		if len(traces) > 0 && tr.blockSize != traces[0].blockSize {
			return nil, d.errAt(tr.v.get("block_size"), "block_size", fmt.Sprintf(
				"the corpus mixes block sizes: %d here, %d in the first session", tr.blockSize, traces[0].blockSize))
		}
		traces = append(traces, tr)
	}
	if len(traces) == 0 {
		return nil, &Error{File: name, Msg: "trace contains no weka session objects"}
	}
	if opt.BlockSize > 0 && opt.BlockSize != traces[0].blockSize {
		return nil, d.errAt(traces[0].v.get("block_size"), "block_size", fmt.Sprintf(
			"weka source block size %d does not match the configured traffic.source.block_size %d", traces[0].blockSize, opt.BlockSize))
	}
	basis, err := resolveBasis(d, traces, opt.NestedTimestampBasis)
	if err != nil {
		return nil, err
	}
	w := &Workload{Agentic: true, HasTimestamps: true, BlockSize: traces[0].blockSize, NestedTimestampBasis: basis}
	ids := &wekaIDs{byHash: map[wekaHashKey]uint32{}}
	for i, tr := range traces {
		s, err := lowerWeka(d, tr, i, basis, ids)
		if err != nil {
			return nil, err
		}
		deps := make([][]int32, len(s.Turns))
		for j := range s.Turns {
			deps[j] = s.Turns[j].Deps
		}
		if cyc := findCycle(deps); cyc != nil {
			// Possible only within the 1 µs tolerances of seams and
			// barriers; aisimulate's graph validation rejects it too.
			return nil, d.errAt(tr.v, "requests", fmt.Sprintf("the lowered play has a dependency cycle through %s",
				s.Turns[cyc[0]].RequestID))
		}
		w.Sessions = append(w.Sessions, s)
		w.Rows += len(s.Turns)
	}
	w.NumContentIDs = ids.n
	return w, nil
}

// resolveBasis picks the corpus-wide nested timestamp basis: auto is
// relative when any child request precedes its marker, absolute otherwise
// ("not_applicable", lowered as absolute, when no subagent has requests).
func resolveBasis(d *wekaDecoder, traces []*wekaTrace, requested string) (string, *Error) {
	switch requested {
	case BasisAbsolute, BasisRelative:
		return requested, nil
	}
	subagents, relative := 0, false
	for _, tr := range traces {
		for _, e := range tr.entries {
			if e.sub == nil || len(e.sub.reqs) == 0 {
				continue
			}
			subagents++
			for _, r := range e.sub.reqs {
				relative = relative || r.t < e.sub.t-wekaJoinEpsilon
			}
		}
	}
	switch {
	case subagents == 0:
		return "not_applicable", nil
	case relative:
		return BasisRelative, nil
	}
	return BasisAbsolute, nil
}

func wekaEnd(r *wekaReq) float64 { return r.t + r.apiTime }

// wekaMs converts seconds to milliseconds at nanosecond resolution,
// clamping negatives to 0 (seconds_to_milliseconds).
func wekaMs(s float64) vtime.Time {
	return vtime.Time(math.Round(max(s, 0)*1e9) / 1e6)
}

func wekaOrder(a, b *wekaReq) int {
	if c := cmpFloat(a.t, b.t); c != 0 {
		return c
	}
	if a.order != b.order {
		return a.order - b.order
	}
	return strings.Compare(a.sourceID, b.sourceID)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func lcp(a, b []uint64) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
