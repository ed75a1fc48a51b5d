// Package harness runs tiny configurations through the real engine for the
// connector and engine tests, so both suites build worlds, rows and asserts
// the same way. Its fixed shape: block size 4 (one trace hash id = one engine
// block), 1 MB blocks (bytes_per_token 250,000), fixed timing, mooncake rows.
// Only tests import it.
package harness

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/connector"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/g2"
	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/scheduler"
	"github.com/kvsim/kvsim/core/trace"
	"github.com/kvsim/kvsim/core/vtime"
)

// World is one rank's configuration (replicas × attention_data ranks).
type World struct {
	Connector        string     // "" = offloading_v0_24
	G1, G2           int        // blocks; G2 0 = no host_offload
	Budget, MaxSeq   int        // default 64, 4
	D2H, H2D         float64    // GB/s; 0 = unlimited
	Latency          vtime.Time // latency_to_first_byte_ms
	Prefill, Decode  vtime.Time // default 2, 1
	Scope            string     // "" = dp_rank_local
	Replicas, DP     int        // default 1, 1
	PoolD2H, PoolH2D float64    // shared pool bandwidths (cluster_shared)
	Routing          string     // engine.routing as YAML ("" = absent: round robin)
}

func (w World) YAML() string {
	def := func(v, d int) int {
		if v == 0 {
			return d
		}
		return v
	}
	pre, dec := w.Prefill, w.Decode
	if pre == 0 && dec == 0 {
		pre, dec = 2, 1
	}
	ho := ""
	if w.G2 > 0 {
		conn := w.Connector
		if conn == "" {
			conn = connector.OffloadingV024
		}
		scope := w.Scope
		if scope == "" {
			scope = "dp_rank_local"
		}
		ho = fmt.Sprintf("\n        host_offload: {num_host_blocks: %d, connector: %s, scope: %s, d2h_bandwidth_gbps: %v, h2d_bandwidth_gbps: %v, latency_to_first_byte_ms: %v, shared_d2h_bandwidth_gbps: %v, shared_h2d_bandwidth_gbps: %v}",
			w.G2, conn, scope, w.D2H, w.H2D, w.Latency, w.PoolD2H, w.PoolH2D)
	}
	routing := ""
	if w.Routing != "" {
		routing = "\n  routing: " + w.Routing
	}
	return fmt.Sprintf(`traffic:
  source: {type: trace, format: mooncake, paths: [t.jsonl], block_size: 4}
  load: {type: trace_timestamps}
engine:
  mode: aggregated
  model: tiny
  hardware: h200_sxm
  backend: vllm%s
  workers:
    aggregated:
      parallelism: {replicas: %d, tensor: 1, attention_data: %d}
      scheduler: {max_batched_tokens: %d, max_sequences: %d}
      kv_cache:
        block_size: 4
        prefix_caching: true
        bytes_per_token: 250000
        capacity: {type: fixed, blocks: %d}%s
      timing: {type: fixed, prefill_ms: %v, decode_ms: %v}
`, routing, def(w.Replicas, 1), def(w.DP, 1), def(w.Budget, 64), def(w.MaxSeq, 4), w.G1, ho, pre, dec)
}

// Row is one mooncake row: a one-turn session arriving at At whose prompt
// is the hash ids' blocks (4 tokens each), truncated to In tokens (0: all).
type Row struct {
	ID   string
	At   vtime.Time
	Hash []int
	In   int
	Out  int
	// Session groups rows into one session (default: the row's own ID).
	// A later turn (Later) carries no timestamp; it becomes ready Delay ms
	// after the previous turn completes.
	Session string
	Later   bool
	Delay   vtime.Time
	// WaitFor makes the row an agentic_mooncake request that waits for the
	// rows with these IDs (a non-root: Delay and ToolWait apply, At not).
	WaitFor  []string
	ToolWait vtime.Time
}

func RowsJSONL(rows []Row) string {
	var b strings.Builder
	for _, r := range rows {
		sess := r.Session
		if sess == "" {
			sess = r.ID
		}
		m := map[string]any{"request_id": r.ID, "session_id": sess, "hash_ids": r.Hash, "output_length": r.Out}
		if !r.Later && len(r.WaitFor) == 0 {
			m["timestamp"] = r.At
		} else if r.Delay > 0 {
			m["delay"] = r.Delay
		}
		if len(r.WaitFor) > 0 {
			m["wait_for"] = r.WaitFor
		}
		if r.ToolWait > 0 {
			m["tool_wait_ms"] = r.ToolWait
		}
		if r.In > 0 {
			m["input_length"] = r.In
		}
		j, _ := json.Marshal(m)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// Event is one connector or scheduler happening, flattened for asserts.
type Event struct {
	What string     // "lookup", "store", "submit", "complete", "fence", "admit", "preempt", "finish", "reject"
	Req  string     // request id ("" when none)
	At   vtime.Time // the event's time
	Kind string     // d2h / h2d for transfers, lookup result for lookups
	Keys []identity.ID
	// Transfer number and timing, for transfer events.
	ID              int32
	Start, Deadline vtime.Time
}

type Outcome struct {
	T    *testing.T
	E    *engine.Engine
	Recs map[string]*report.Request
	Idx  map[string]int
	Ev   []Event
}

type recorder struct {
	o *Outcome
	e *engine.Engine
}

func (r *recorder) name(idx int32) string {
	if idx < 0 || int(idx) >= len(r.e.Records) {
		return ""
	}
	return r.e.Records[idx].RequestID
}

func (r *recorder) ConnectorEvent(ev connector.Event) {
	x := Event{At: ev.At, Keys: append([]identity.ID(nil), ev.Keys...)}
	if ev.Req != nil {
		x.Req = r.name(ev.Req.Index)
	}
	switch ev.Kind {
	case connector.EvLookup:
		x.What, x.Kind = "lookup", ev.Result.String()
	case connector.EvStorePrepared:
		x.What = "store"
	case connector.EvSubmit:
		x.What = "submit"
	case connector.EvComplete:
		x.What = "complete"
	case connector.EvFence:
		x.What, x.At = "fence", ev.Until
	case connector.EvStartLoad:
		x.What, x.Kind = "start_load", ev.Start.String()
	case connector.EvStoreRetry:
		x.What = "store_retry"
	default:
		return
	}
	if tr := ev.Transfer; tr != nil {
		x.Kind = tr.Kind.String()
		x.Keys = append([]identity.ID(nil), tr.Keys...)
		x.ID, x.Start, x.Deadline = tr.ID, tr.Start, tr.Deadline
		if tr.Req != nil {
			x.Req = r.name(tr.Req.Index)
		}
	}
	r.o.Ev = append(r.o.Ev, x)
}

func (r *recorder) SchedulerEvent(ev scheduler.Event) {
	x := Event{At: ev.At, Req: r.name(ev.Req.Index)}
	switch ev.Kind {
	case scheduler.EvAdmit:
		x.What = "admit"
	case scheduler.EvPreempt:
		x.What = "preempt"
	case scheduler.EvFinish:
		x.What = "finish"
	case scheduler.EvReject:
		x.What = "reject"
	case scheduler.EvCancel:
		x.What = "cancel"
	case scheduler.EvAdmissionWait:
		x.What = "admission_wait"
	}
	r.o.Ev = append(r.o.Ev, x)
}

// Run runs rows through the engine with the invariant checker on;
// rules, when set, edits the profile's rules first.
func Run(t *testing.T, w World, rows []Row, rules func(*connector.Rules)) *Outcome {
	t.Helper()
	cfg, err := config.Parse("test.yaml", ".", []byte(w.YAML()), nil)
	if err != nil {
		t.Fatalf("config: %v\n%s", err, w.YAML())
	}
	wl, err := trace.Read(strings.NewReader(RowsJSONL(rows)), trace.Options{Name: "t.jsonl", Format: trace.FormatMooncake, BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(cfg, wl, engine.Options{Check: true, Rules: rules, MaxPasses: 100000})
	if err != nil {
		t.Fatal(err)
	}
	o := &Outcome{T: t, E: e, Recs: map[string]*report.Request{}, Idx: map[string]int{}}
	rec := &recorder{o: o, e: e}
	for _, rk := range e.Ranks() {
		rk.SetObserver(rec)
		if rk.Host != nil {
			rk.Host.SetObserver(rec)
		}
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	for i := range e.Records {
		o.Recs[e.Records[i].RequestID] = &e.Records[i]
		o.Idx[e.Records[i].RequestID] = i
	}
	return o
}

// Rec returns the record of request id.
func (o *Outcome) Rec(id string) *report.Request {
	o.T.Helper()
	r, ok := o.Recs[id]
	if !ok {
		o.T.Fatalf("no request %q", id)
	}
	return r
}

// Key returns the identity of block j of request id, which must have been
// born there (its first computation in the run).
func (o *Outcome) Key(id string, j int) identity.ID {
	o.T.Helper()
	ids := o.E.Identities()
	want := identity.Origin{Request: int32(o.Idx[id]), Block: int32(j)}
	for k := 0; k < ids.Len(); k++ {
		if ids.Origin(identity.ID(k)) == want {
			return identity.ID(k)
		}
	}
	o.T.Fatalf("no identity born at %s block %d", id, j)
	return identity.None
}

// G2State returns the state of block j of request id in rank 0's G2.
func (o *Outcome) G2State(id string, j int) g2.State {
	return o.E.Ranks()[0].Host.Tier().Lookup(o.Key(id, j))
}

// InG2 lists, for blocks 0..n-1 of request id, whether rank 0's G2 holds
// them (pending or resident).
func (o *Outcome) InG2(id string, n int) []bool {
	out := make([]bool, n)
	for j := range out {
		out[j] = o.G2State(id, j) != g2.Absent
	}
	return out
}

// Events returns the recorded events of one kind (and request, when not "").
func (o *Outcome) Events(what, req string) []Event {
	var out []Event
	for _, x := range o.Ev {
		if x.What == what && (req == "" || x.Req == req) {
			out = append(out, x)
		}
	}
	return out
}

// AllCompleted fails the test unless every request completed.
func (o *Outcome) AllCompleted() {
	o.T.Helper()
	for id, r := range o.Recs {
		if r.Status != report.StatusCompleted {
			o.T.Errorf("%s: status %q; want completed", id, r.Status)
		}
	}
}

func Profile(t *testing.T, name string) connector.Rules {
	t.Helper()
	r, err := connector.Profile(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Dump logs every record and event (debugging aid for failing scenarios).
func (o *Outcome) Dump() {
	o.T.Helper()
	for i := range o.E.Records {
		r := &o.E.Records[i]
		o.T.Logf("%s: arrival %v admit %v first %v end %v reused %d g1 %d host %d status %s",
			r.RequestID, r.ArrivalMs, r.FirstAdmitMs, r.FirstTokenMs, r.TerminalMs, r.FirstReused, r.FirstG1, r.FirstHost, r.Status)
	}
	for _, x := range o.Ev {
		o.T.Logf("  %-8s %-4s at %-6v %-5s keys %v start %v deadline %v", x.What, x.Req, x.At, x.Kind, x.Keys, x.Start, x.Deadline)
	}
}

// Transfers returns the submit events of one direction ("d2h"/"h2d") of
// request req, in submission order.
func (o *Outcome) Transfers(kind, req string) []Event {
	var out []Event
	for _, x := range o.Events("submit", req) {
		if x.Kind == kind {
			out = append(out, x)
		}
	}
	return out
}
