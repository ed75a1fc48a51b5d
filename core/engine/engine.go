// Package engine owns the replay's global virtual clock and its event order
// (docs/model/engine.md ("Event order at one instant")): it builds the
// workers, DP ranks, G1 pools and G2 domains from a config, turns the workload
// into requests as the load model makes them ready, places them, runs group
// passes, settles every effect at one instant before the clock moves, and
// fills the report records.
//
// Event order at one instant t (repeated until nothing changes):
//  1. shared G2 pools advance (physical completions);
//  2. idle ranks apply transfer completions due by t;
//  3. group passes ending at t complete: every rank's engine boundary, then
//     the pass's tokens, completions and next-turn readiness;
//  4. idle ranks apply completions again;
//  5. every idle worker with a runnable rank starts a group pass;
//  6. the arrivals due at t are dispatched (a rank that only now has work
//     starts its pass in the next round: the Decision of
//     docs/model/engine.md ("Arrivals at a pass boundary")).
//
// A private completion on a rank that holds no request is not an instant of
// its own: step 2 of the rank's next instant applies it, deadline by
// deadline, with its own time (nextEvent explains why nothing can tell).
//
// Instants where only group passes end and pure decode passes start are
// processed without settle by fastForward (fastforward.go), with the same
// effects in the same order.
package engine

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/connector"
	"github.com/kvsim/kvsim/core/g2"
	"github.com/kvsim/kvsim/core/g3"
	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/load"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/scheduler"
	"github.com/kvsim/kvsim/core/timing"
	"github.com/kvsim/kvsim/core/trace"
	"github.com/kvsim/kvsim/core/transfer"
	"github.com/kvsim/kvsim/core/vtime"
)

// Options tune a run. Check, Progress, Observer, WakeForEveryCompletion,
// FullStoreHook and NoFastForward never change its results (tests compare
// reports both ways); MaxPasses may stop it; Rules and FIFOWaiters change its results on
// purpose: tests use them to switch one rule and show what it decides.
type Options struct {
	// Check runs the invariant checker after every pass (tests).
	Check bool
	// Progress, when set, is called now and then with completed and total
	// requests.
	Progress func(done, total int)
	// Observer, when set, receives every state change (the per-pass record).
	Observer Observer
	// MaxPasses, when positive, stops the run with ErrTooManyPasses once
	// that many group passes have started (the worker API's bound on work).
	MaxPasses int64
	// ProfilePlays is the number of play instances an agentic profile
	// builds (0: DefaultProfileBudget); replay.RunWith raises it when a run
	// returns ErrProfileBudget.
	ProfilePlays int
	// Rules, when set, may edit a connector profile's rules before the run
	// (tests use it to switch a single rule).
	Rules func(r *connector.Rules)
	// WakeForEveryCompletion turns off the deferral of completions on
	// ranks that hold nothing (see nextEvent): tests run both ways and
	// compare the reports and records byte for byte.
	WakeForEveryCompletion bool
	// FullStoreHook turns off the G2 store hook's shortcuts
	// (connector.Adapter.FullStoreHook), for the same comparison.
	FullStoreHook bool
	// FIFOWaiters orders awake connector waiters strictly first come first
	// served, without scheduler.Rank.nextCandidate's completed-load-first
	// Decision: tests use it to show the stall that Decision prevents.
	FIFOWaiters bool
	// NoFastForward turns off the fast-forward of pure decode passes
	// (fastforward.go), for the same comparison.
	NoFastForward bool
	// Shard, when Of > 1, simulates only some workers (see Shard; only
	// for runs Shardable allows).
	Shard Shard
	// Stop, when set, is asked after every instant; once it says true the
	// run ends there, its remaining events never processed, and Stopped
	// says so. The page's pass view uses it to re-run a config only as far
	// as the window of passes it shows (record.Recorder.Past): the record
	// of that window is the whole run's, the reports are of a partial run.
	Stop func() bool
}

// ErrTooManyPasses is returned when Options.MaxPasses is exceeded.
var ErrTooManyPasses = errors.New("the run needs more passes than allowed")

// ErrStalled is returned when nothing is left to happen but dispatched
// requests have not finished: no arrival, pass or transfer will ever wake
// them, so the report would silently leave them out (a scheduling deadlock
// of the modelled rules; docs/invariants.md E-1).
var ErrStalled = errors.New("the replay stalled")

// Observer receives engine-level happenings; the per-pass record
// implements it together with the scheduler, G1, G2 and connector
// observers.
type Observer interface {
	// Attach is called once per rank before the run starts.
	Attach(rank *Rank)
	// Focus names the rank whose pass, boundary or idle tick runs next, so
	// that changes with no rank of their own (a shared G2 pool's evictions)
	// are attributed to it.
	Focus(rank *Rank)
	PassStart(rank *Rank, start vtime.Time)
	PassEnd(rank *Rank, res *scheduler.PassResult, groupEnd vtime.Time)
	// Finish is called once when the run ends.
	Finish(e *Engine)
}

// A Rank is one DP rank of one worker.
type Rank struct {
	Worker int // global worker index
	DP     int
	Index  int // global rank index
	Role   string
	*scheduler.Rank
	passes int // the passes this rank ran
}

type worker struct {
	index   int
	role    string
	roleIdx int // index inside its role
	ranks   []*Rank
	busy    bool
	end     vtime.Time
	planned []bool
	// pure marks the ranks fastForward's pureInstant found runnable, with a
	// pure decode step next, before the pass end's commit.
	pure []bool
	// noopAt is the instant of the last pass that changed nothing (Unset
	// when the last pass changed something); the worker does not start
	// again at that instant unless poked.
	noopAt vtime.Time
	poked  bool
}

type session struct {
	known int // tokens in the session's history (accumulating sessions)
	seq   identity.Sequence
	first int // global index of turn 0
}

// Engine is one replay run.
type Engine struct {
	cfg  *config.Config
	wl   *trace.Workload
	opts Options

	ids     *identity.Table
	reg     connector.Registry
	workers []*worker
	ranks   []*Rank
	shared  []*connector.Domain

	reqs     []request.Request
	Records  []report.Request
	sessions []session
	arrivals minHeap[arrival]
	driver   *load.Driver
	place    *pool // the aggregated pool
	// routedFresh is, per request, the prompt tokens the kv_router expected
	// its prefill rank to compute (nil unless a pool routes by KV).
	routedFresh []int32
	cutoff      vtime.Time
	stopped     bool // Options.Stop ended the run
	instants    int  // instants processed (yieldEvery)
	now         vtime.Time
	tokens      scheduler.Generated // the ranks' fresh output token ids
	done        int

	CommittedPrefill int64
	Preemptions      int64
	Passes           int64
	bs               int
	checkErr         error

	// P/D state (docs/model/pd.md).
	pd           bool
	prefillPlace *pool
	decodePlace  *pool
	decodeBase   int                  // index of the first decode worker
	reqsD        []request.Request    // decode-side request per request index
	pending      [][]*request.Request // per rank: destinations awaiting a reservation
	handoffs     minHeap[handoff]     // KV transfers in flight
	handoffSeq   int64
	srcRank      []*Rank // per request: the prefill rank holding its source, or nil

	agentic  *agenticState // nil unless the workload is agentic
	cuts     []trace.Cut   // agentic_snapshot: each lane's cut
	warm     *warmupState  // agentic_warmup, else nil
	cancels  []int32       // requests to cancel once their rank's pass ends
	canceled int           // requests canceled by the client so far
	prof     *profileState // agentic_profile, else nil
	keep     int           // records to report (-1: all); set at Finish
	runErr   error         // a run-stopping error found inside an event

	g3Stores []*g3.Store // G3 tiers (one shared, or one per worker)

	blockEstimate int     // identities the workload can create (sizes indexes)
	slotCap       []int32 // block-table capacity of each request (nil in P/D: preallocated)
	started       bool
	lastReport    int

	heldBack bool // a shard's worker was held back by the no-op rule (shard.go)

	ff     bool // fastForwardable
	hosted bool // some rank has a G2 connector (fastForward's pureStart)
	// FastForwarded counts the group passes computed by the fast-forward
	// (scheduler.Rank.DecodeStep), a part of Passes.
	FastForwarded int64
}

// New builds the engine for cfg and workload wl.
func New(cfg *config.Config, wl *trace.Workload, opts Options) (*Engine, error) {
	roles := cfg.Roles()
	if len(roles) == 0 {
		return nil, cfg.Refuse("engine.workers", "no worker role")
	}
	if sh := opts.Shard; sh.on() && (sh.Index < 0 || sh.Index >= sh.Of || Shardable(cfg, wl) < sh.Of || opts.Observer != nil || opts.MaxPasses > 0) {
		return nil, fmt.Errorf("internal error: shard %d of %d asked for a run that cannot be split so (docs/model/engine.md (\"Sharded runs\"))", sh.Index, sh.Of)
	}
	var cuts []trace.Cut
	plays := 0 // agentic profile plays (the lanes' plays and instances)
	if wl.Agentic {
		src := wl
		var err error
		if wl, cuts, err = snapshot(cfg, wl); err != nil {
			return nil, err
		}
		if pr := cfg.Traffic.Load.AgenticProfile; pr != nil {
			budget := opts.ProfilePlays
			if budget <= 0 {
				budget = DefaultProfileBudget(len(cuts))
			}
			if wl, err = withInstances(cfg, wl, src, budget); err != nil {
				return nil, err
			}
		}
		plays = len(wl.Sessions)
		if cfg.Traffic.Load.AgenticWarmup {
			wl = withPreparation(wl, src, cuts)
		}
	}
	e := &Engine{cfg: cfg, wl: wl, opts: opts, bs: roles[0].KVCache.BlockSize, cuts: cuts, keep: -1,
		pd:     cfg.Engine.Mode == config.ModeDisaggregated,
		cutoff: vtime.Never, tokens: scheduler.Generated{Next: trace.GeneratedTokenBase}, lastReport: -1}
	if cfg.Traffic.Stop.HasMaxVirtualTime {
		e.cutoff = cfg.Traffic.Stop.MaxVirtualTimeMs
	}
	// Size every per-request buffer up front from the workload, so that the
	// steady state allocates nothing per pass
	// (docs/model/cases.md ("Case E: the benchmark")).
	n := 0
	e.sessions = make([]session, len(wl.Sessions))
	for i := range wl.Sessions {
		e.sessions[i].first = n
		n += len(wl.Sessions[i].Turns)
	}
	e.reqs = make([]request.Request, n)
	e.Records = make([]report.Request, n)
	slotCap := make([]int, n)
	totalSlots, totalBlocks := 0, 0
	for s := range wl.Sessions {
		ws := &wl.Sessions[s]
		known := 0
		for t := range ws.Turns {
			tu := &ws.Turns[t]
			if !wl.Accumulate {
				known = 0
			}
			known += tu.ContentLength + tu.OutputLength
			c := known/e.bs + 1
			slotCap[e.sessions[s].first+t] = c
			totalSlots += c
			if !wl.Accumulate {
				totalBlocks += c
			}
		}
		if wl.Accumulate {
			totalBlocks += known/e.bs + 1
		}
	}
	e.ids = identity.NewTable(totalBlocks)
	e.blockEstimate = totalBlocks
	var decodeSlots [][]int32
	perReq := 1
	if e.pd {
		perReq = 2 // prefill and decode admissions and routings
		totalSlots *= 2
	}
	// Without P/D a request's block table is allocated when it is
	// dispatched and dropped when its turn is done, so block tables cost
	// what is in flight, not what the trace holds (35 MB of the Mooncake
	// conversation trace's peak otherwise).
	if !e.pd {
		totalSlots = 0
		e.slotCap = make([]int32, n)
		for i, c := range slotCap {
			e.slotCap[i] = int32(c)
		}
	}
	slotArena := make([]int32, totalSlots)
	admArena := make([]report.Admission, perReq*n)
	routeArena := make([]report.Routing, perReq*n)
	gapCap, gapTotal := e.gapCapacities(wl, n)
	gapArena := make([]report.Gap, gapTotal)
	gapValues := report.NewGapValues()
	var prefillArena []report.PrefillTime
	if e.recordsBounds() {
		prefillArena = make([]report.PrefillTime, n)
	}
	for s := range wl.Sessions {
		ws := &wl.Sessions[s]
		for t := range ws.Turns {
			i := e.sessions[s].first + t
			rec := report.NewRequest()
			rec.Index = i
			rec.RequestID = ws.Turns[t].RequestID
			if rec.RequestID == "" {
				rec.RequestID = fmt.Sprintf("%s-%d", ws.ID, t)
			}
			rec.SessionID = ws.ID
			rec.Turn = t
			rec.RequestedOutput = ws.Turns[t].OutputLength
			rec.Admissions = admArena[perReq*i : perReq*i : perReq*(i+1)]
			rec.Routing = routeArena[perReq*i : perReq*i : perReq*(i+1)]
			rec.SetGapBuffer(gapArena[:0:gapCap(i)], gapValues)
			if prefillArena != nil {
				rec.Prefill = &prefillArena[i]
			}
			gapArena = gapArena[gapCap(i):]
			e.Records[i] = rec
			c := slotCap[i]
			e.reqs[i] = request.Request{Index: int32(i), Session: int32(s), Turn: int32(t)}
			if e.pd {
				e.reqs[i].Slots = slotArena[:0:c]
				slotArena = slotArena[c:]
				decodeSlots = append(decodeSlots, slotArena[:0:c])
				slotArena = slotArena[c:]
			}
		}
	}
	if e.pd {
		p, d := cfg.Engine.Workers.Prefill, cfg.Engine.Workers.Decode
		if err := e.buildRole(p, config.RolePrefill, scheduler.Prefill); err != nil {
			return nil, err
		}
		if err := e.buildRole(d, config.RoleDecode, scheduler.Decode); err != nil {
			return nil, err
		}
		var err error
		if e.prefillPlace, err = e.newPool(p, 0, true); err != nil {
			return nil, err
		}
		if e.decodePlace, err = e.newPool(d, e.decodeBase, true); err != nil {
			return nil, err
		}
		e.reqsD = make([]request.Request, n)
		for i := range e.reqsD {
			e.reqsD[i].Slots = decodeSlots[i]
		}
		e.pending = make([][]*request.Request, len(e.ranks))
		e.srcRank = make([]*Rank, n)
	} else {
		role := cfg.Engine.Workers.Aggregated
		if err := e.buildRole(role, config.RoleAggregated, scheduler.Aggregated); err != nil {
			return nil, err
		}
		var err error
		if e.place, err = e.newPool(role, 0, false); err != nil {
			return nil, err
		}
	}
	if wl.Agentic {
		e.initAgentic()
		if pr := cfg.Traffic.Load.AgenticProfile; pr != nil {
			e.initProfile(*pr, plays)
		}
		if cfg.Traffic.Load.AgenticWarmup {
			e.initWarmup(len(cuts), plays)
		}
	}
	e.driver = e.newDriver()
	if opts.Observer != nil {
		for _, r := range e.ranks {
			opts.Observer.Attach(r)
		}
	}
	e.ff = e.fastForwardable()
	for _, rk := range e.ranks {
		e.hosted = e.hosted || rk.Host != nil
	}
	return e, nil
}

func (e *Engine) newDriver() *load.Driver {
	l := e.cfg.Traffic.Load
	n := len(e.wl.Sessions)
	if e.warm != nil {
		n = e.warm.plays // the preparation plays start on their own
	} else if e.prof != nil {
		n = e.prof.plays
	}
	if e.wl.Agentic && l.AgenticLanes > 0 {
		return load.NewClosedScaled(n, l.AgenticLanes, l.Speedup)
	}
	switch l.Type {
	case config.LoadTraceTimestamps:
		a := make([]vtime.Time, n)
		for i := range e.wl.Sessions {
			a[i] = e.wl.Sessions[i].ArrivalMs
		}
		return load.NewTimestamps(a, l.Speedup)
	case config.LoadPoisson:
		return load.NewPoisson(n, openRate(l), l.Seed)
	case config.LoadConstantRate:
		return load.NewConstantRate(n, openRate(l))
	}
	return load.NewClosed(n, l.Concurrency)
}

func openRate(l config.Load) float64 {
	if l.SessionsPerSecond > 0 {
		return l.SessionsPerSecond
	}
	return l.RequestsPerSecond
}

// maxGapRoom caps the gap runs a record has room for up front.
const maxGapRoom = 1024

// gapCapacities sizes each record's list of inter-token gap runs
// (report.Request.Token): two with fixed pass times everywhere, whose gaps
// take one or two values; with a modelled pass time nearly every gap is a
// new value, so a record gets room for one run per output token (up to
// maxGapRoom) from one allocation instead of regrowing its list.
func (e *Engine) gapCapacities(wl *trace.Workload, n int) (func(i int) int, int) {
	modelled := false
	for _, r := range e.cfg.Roles() {
		modelled = modelled || r.Timing.Kind != timing.Fixed
	}
	if !modelled {
		return func(int) int { return 2 }, 2 * n
	}
	room := make([]int32, n)
	total := 0
	for s := range wl.Sessions {
		for t, tu := range wl.Sessions[s].Turns {
			c := min(max(tu.OutputLength, 2), maxGapRoom)
			room[e.sessions[s].first+t] = int32(c)
			total += c
		}
	}
	return func(i int) int { return int(room[i]) }, total
}

// recordsBounds reports whether a role's timing says what bounds its
// passes (roofline, trained_physics): then every record carries the step
// time of its prefill passes by bound (report.PrefillTime).
func (e *Engine) recordsBounds() bool {
	for _, r := range e.cfg.Roles() {
		if r.Timing.Kind == timing.Roofline || r.Timing.Kind == timing.TrainedPhysics {
			return true
		}
	}
	return false
}

// buildRole creates the workers, ranks, G1 pools and G2 domains of a role.
func (e *Engine) buildRole(role *config.Role, name string, kind scheduler.Role) error {
	kv := role.KVCache
	sc := scheduler.Config{
		Role: kind, BlockSize: kv.BlockSize, Capacity: kv.CapacityBlocks,
		MaxBatchedTokens: role.Scheduler.MaxBatchedTokens, MaxSequences: role.Scheduler.MaxSequences,
		ChunkedPrefill: e.cfg.Engine.EnableChunkedPrefill, PrefixCaching: kv.PrefixCaching,
		ContextLength: e.cfg.Engine.ContextLength, PrefillMs: role.Timing.PrefillMs, DecodeMs: role.Timing.DecodeMs,
		FIFOWaiters: e.opts.FIFOWaiters,
	}
	if t := role.Timing; t.Kind != timing.Fixed {
		sc.Timing = &timing.Model{Kind: t.Kind, Speedup: t.SpeedupRatio, DecodeSpeedup: t.DecodeSpeedupRatio,
			KVTokens: int64(kv.CapacityBlocks) * int64(kv.BlockSize), Step: t.Step}
		if err := sc.Timing.Validate(); err != nil {
			return err
		}
	}
	var rules connector.Rules
	var shared *connector.Domain
	ho := kv.HostOffload
	if ho != nil {
		var err error
		if rules, err = connector.Profile(ho.Connector); err != nil {
			return err
		}
		if e.opts.Rules != nil {
			e.opts.Rules(&rules)
		}
		if ho.Scope == config.ScopeClusterShared {
			// Every role that selects cluster_shared joins one pool.
			if len(e.shared) == 0 {
				fs := &transfer.FairShare{PoolGBps: [2]float64{ho.SharedD2HBandwidthGBps, ho.SharedH2DBandwidthGBps}}
				e.shared = append(e.shared, connector.NewDomain(ho.NumHostBlocks, rules.Eviction, fs, &e.reg))
			}
			shared = e.shared[0]
		}
	}
	if kind == scheduler.Decode {
		e.decodeBase = len(e.workers)
	}
	var g3Shared *g3.Store
	newG3 := func() *g3.Store {
		g := kv.G3Offload
		st := g3.NewStore(g.NumBlocks, int64(kv.BlockSize)*kv.BytesPerToken, g.SharedWriteBandwidthGBps, g.SharedReadBandwidthGBps)
		e.g3Stores = append(e.g3Stores, st)
		return st
	}
	for w := 0; w < role.Parallelism.Replicas; w++ {
		wk := &worker{index: len(e.workers), role: name, roleIdx: w, noopAt: vtime.Unset()}
		var g3Store *g3.Store
		if kv.G3Offload != nil && ho != nil {
			if kv.G3Offload.Scope == config.ScopeClusterShared {
				if g3Shared == nil {
					g3Shared = newG3()
				}
				g3Store = g3Shared
			} else {
				g3Store = newG3()
			}
		}
		// A shard's other workers never receive a request: their G1 pools
		// are one block and their indexes stay empty.
		owned, wsc := e.opts.Shard.owns(wk.index), sc
		if !owned {
			wsc.Capacity = 1
		}
		for d := 0; d < role.Parallelism.AttentionData; d++ {
			rk := &Rank{Worker: wk.index, DP: d, Index: len(e.ranks), Role: name,
				Rank: scheduler.New(wsc, e.ids, &e.tokens)}
			if owned {
				rk.Pool.SizeIndex(e.blockEstimate)
			}
			if ho != nil {
				dom := shared
				if dom == nil {
					dom = connector.NewDomain(ho.NumHostBlocks, rules.Eviction, nil, &e.reg)
				}
				if owned {
					dom.Tier.SizeIndex(e.blockEstimate)
				}
				rk.Host = connector.NewAdapter(rules, rk.Index, rk.Pool, dom, kv.BlockSize, kv.BytesPerToken,
					connector.Link{D2HGBps: ho.D2HBandwidthGBps, H2DGBps: ho.H2DBandwidthGBps,
						LatencyToFirstByteMs: ho.LatencyToFirstByteMs})
				rk.Host.FullStoreHook = e.opts.FullStoreHook
				if g3Store != nil {
					g := kv.G3Offload
					rk.Host.SetG3(g3Store, wk.index, g3.Link{ReadGBps: g.ReadBandwidthGBps, WriteGBps: g.WriteBandwidthGBps,
						LatencyToFirstByteMs: g.LatencyToFirstByteMs})
				}
			}
			wk.ranks = append(wk.ranks, rk)
			e.ranks = append(e.ranks, rk)
		}
		wk.planned = make([]bool, len(wk.ranks))
		wk.pure = make([]bool, len(wk.ranks))
		e.workers = append(e.workers, wk)
	}
	return nil
}

// RequestRecords returns every request's report record, in request order
// (the per-pass record names requests and sessions from them).
func (e *Engine) RequestRecords() []report.Request { return e.Records }

// Ranks returns every DP rank in global order.
func (e *Engine) Ranks() []*Rank { return e.ranks }

// Identities returns the run's identity table.
func (e *Engine) Identities() *identity.Table { return e.ids }

// SharedDomains returns the cluster_shared G2 pools.
func (e *Engine) SharedDomains() []*connector.Domain { return e.shared }

// Now is the virtual time reached.
func (e *Engine) Now() vtime.Time { return e.now }

// Run replays the workload to the end (or the soft cutoff).
func (e *Engine) Run() error {
	if _, err := e.RunUntil(vtime.Never); err != nil {
		return err
	}
	return e.Finish()
}

// RunUntil processes every instant up to and including until (or the
// soft cutoff) and reports whether events remain. Run is RunUntil(+Inf)
// then Finish; benchmarks use it to look at a steady stretch of a run.
func (e *Engine) RunUntil(until vtime.Time) (more bool, err error) {
	if !e.started {
		e.started = true
		if e.warm != nil {
			e.startWarmup()
		} else {
			if e.prof != nil {
				e.startProfile(0)
			}
			e.driver.Start(e.startSession)
		}
	}
	total := len(e.reqs)
	for {
		t, late := e.nextEvent()
		if late < t && (t == vtime.Never || t > until || t > e.cutoff) {
			t = late // nothing else comes before the end, until or the cutoff
		}
		if t == vtime.Never {
			if err := e.stalled(); err != nil {
				return false, err
			}
			return false, e.barrierNeverOpened()
		}
		if t > e.cutoff {
			return false, nil
		}
		if t > until {
			return true, nil
		}
		if !e.ff || !e.fastForward(t, until) {
			e.now = t
			e.settle()
		}
		if e.checkErr != nil {
			return false, e.checkErr
		}
		if e.warm != nil {
			if err := e.maybeOpenBarrier(); err != nil {
				return false, err
			}
		}
		if e.runErr != nil {
			return false, e.runErr
		}
		if e.opts.MaxPasses > 0 && e.Passes > e.opts.MaxPasses {
			return false, fmt.Errorf("%w (%d)", ErrTooManyPasses, e.opts.MaxPasses)
		}
		e.counted()
		if e.opts.Stop != nil && e.opts.Stop() {
			e.stopped = true
			return false, nil
		}
		if e.opts.Progress != nil && e.done/1024 != e.lastReport {
			e.lastReport = e.done / 1024
			e.opts.Progress(e.done, total)
		}
	}
}

// stalled returns ErrStalled, naming the first stuck requests, when the run
// ran out of events with dispatched requests unfinished.
func (e *Engine) stalled() error {
	stuck := e.Dispatched() - e.done
	if stuck <= 0 {
		return nil
	}
	var ids []string
	for i := range e.Records {
		if rec := &e.Records[i]; rec.DispatchedMs.IsSet() && rec.Status == "" && len(ids) < 3 {
			ids = append(ids, rec.RequestID)
		}
	}
	return fmt.Errorf("%w at %v ms: %d dispatched requests can never finish (%s): no arrival, pass or transfer is left to wake them",
		ErrStalled, e.now, stuck, strings.Join(ids, ", "))
}

// MostRankPasses is the most passes a DP rank ran (a record's
// RunPasses of its longest rank).
func (e *Engine) MostRankPasses() int {
	n := 0
	for _, rk := range e.ranks {
		n = max(n, rk.passes)
	}
	return n
}

// yieldEvery is how many instants a run processes between yields to the Go
// scheduler under GOOS=js GOARCH=wasm (0 elsewhere). There the runtime has
// one thread and nothing preempts a running goroutine, so the garbage
// collector's mark worker runs only when the simulation yields: without it
// one collection cycle of a Mooncake run lasted the whole run (7.2 s) and
// the heap grew to 272 MB; yielding every 4,096 instants it ran 8 cycles,
// peaked at 182 MB and took 7.5-7.8 s instead of 8.7-8.9 (docs/ui.md ("One
// thread, no preemption: the run yields to the collector")).
// Yields change nothing the run computes.
var yieldEvery = func() int {
	if runtime.GOARCH == "wasm" {
		return 4096
	}
	return 0
}()

// counted counts an instant processed, and yields every yieldEvery of
// them (a fast-forward counts each of its instants too).
func (e *Engine) counted() {
	if e.instants++; yieldEvery > 0 && e.instants%yieldEvery == 0 {
		runtime.Gosched()
	}
}

// Stopped tells whether Options.Stop ended the run before its events ran
// out: its reports are then those of the run so far.
func (e *Engine) Stopped() bool { return e.stopped }

// Finish ends the run: the last progress report and the observer's Finish.
func (e *Engine) Finish() error {
	total := len(e.reqs)
	if e.opts.Progress != nil {
		e.opts.Progress(e.done, total)
	}
	if e.opts.Observer != nil {
		e.opts.Observer.Finish(e)
	}
	e.finishProfile()
	e.finishWarmup()
	if e.keep >= 0 {
		e.Records = e.Records[:e.keep]
	}
	return nil
}

// nextEvent returns the time of the next event, t, and late: the earliest
// private completion of a rank that holds no request
// and has nothing to submit (connector.Adapter.Deferrable): such a
// completion only changes that rank's own tier and pool, in deadline order
// whenever it is applied, so it is not an event of its own; the rank's next
// event (an arrival, a handoff) applies it first, with its own time. Waking
// for each one cost simple_cpu_v0_32's §E run 172,000 extra events.
// RunUntil still stops at late when nothing else comes before its limit.
func (e *Engine) nextEvent() (t, late vtime.Time) {
	// Plain comparisons rather than math.Min: times are never NaN, and
	// under GOOS=js math.Min is a real call on the hottest path.
	t, late = vtime.Never, vtime.Never
	if len(e.arrivals) > 0 {
		t = e.arrivals[0].at
	}
	for _, w := range e.workers {
		if w.busy {
			if w.end < t {
				t = w.end
			}
			continue
		}
		for _, rk := range w.ranks {
			if rk.Host != nil {
				d := rk.Host.NextDeadline()
				if d < e.now {
					d = e.now
				}
				switch {
				case !e.opts.WakeForEveryCompletion && rk.Idle() && rk.Host.Deferrable():
					if d < late {
						late = d
					}
				case d < t:
					t = d
				}
			}
		}
		if w.canStart(e.now) && e.now < t {
			t = e.now
		}
	}
	for _, d := range e.shared {
		if x := d.Next(); x < t {
			t = x
		}
	}
	if len(e.handoffs) > 0 && e.handoffs[0].at < t {
		t = e.handoffs[0].at
	}
	for _, st := range e.g3Stores {
		if x := st.Next(); x < t {
			t = x
		}
	}
	if e.prof != nil {
		if x := e.profileNext(); x < t {
			t = x
		}
	}
	return t, late
}

func (w *worker) runnable() bool {
	for _, rk := range w.ranks {
		if rk.Runnable() {
			return true
		}
	}
	return false
}

func (w *worker) canStart(now vtime.Time) bool {
	if w.busy || !w.runnable() {
		return false
	}
	return w.poked || !w.noopAt.Same(now)
}

// settle applies every effect at e.now until nothing changes. An effect is
// due when its time is ≤ now: now is one of those times, copied (vtime's
// exact-comparison rule), so everything meant for this instant is due.
func (e *Engine) settle() {
	now := e.now
	for {
		changed := false
		for _, d := range e.shared {
			if d.Advance(now) {
				changed = true
			}
		}
		for _, st := range e.g3Stores {
			jobs := st.Advance(now)
			for _, j := range jobs {
				j.Owner.G3Completed(j)
				changed = true
			}
			if len(jobs) > 0 {
				e.wakeG3Readers(st)
			}
		}
		for len(e.handoffs) > 0 && e.handoffs[0].at <= now {
			e.completeHandoff(e.handoffs.pop(), now)
			changed = true
		}
		changed = e.tickIdle(now) || changed
		for _, w := range e.workers {
			if w.busy && w.end <= now {
				e.completePass(w)
				changed = true
			}
		}
		changed = e.tickIdle(now) || changed
		if len(e.cancels) > 0 {
			changed = e.applyCancels(now) || changed
		}
		if e.prof != nil {
			changed = e.applyProfile(now) || changed
		}
		for _, w := range e.workers {
			if w.canStart(now) {
				e.startPass(w, now)
				changed = true
			}
		}
		for len(e.arrivals) > 0 && e.arrivals[0].at <= now {
			a := e.arrivals.pop()
			changed = true
			if p := e.prof; p != nil && int(a.session) < p.plays {
				if !p.admits(now) {
					e.neverIssued(int(a.session), int(a.turn), now)
					continue
				}
				e.profileDispatched(int(a.session))
			}
			e.dispatch(a.session, a.turn, now)
			if e.agentic != nil { // here, not in dispatch: its inlining is worth 200 instructions a request
				e.agenticDispatched(e.sessions[a.session].first+int(a.turn), int(a.session), now)
			}
		}
		if !changed {
			if e.opts.Shard.on() {
				e.noteHeldBack(now)
			}
			return
		}
	}
}

// wakeG3Readers wakes the connector waiters of every rank behind G3 store
// st. Decision (docs/model/g3.md ("Completions and wake-ups"); aisimulate is
// silent): a G3 completion wakes them all, not only the ranks of the
// submitter's G2 domain, because a cluster_shared store is read by every
// worker: one worker's finished write is what another's deferred lookup waits
// for (its block was pending in G3), and without this wake that lookup slept
// to the end of the run.
func (e *Engine) wakeG3Readers(st *g3.Store) {
	for _, w := range e.workers {
		for _, rk := range w.ranks {
			if rk.Host != nil && rk.Host.G3() == st {
				rk.Host.Wake()
			}
		}
	}
}

// tickIdle applies due transfer completions on idle workers' ranks and
// wakes their sleepers.
func (e *Engine) tickIdle(now vtime.Time) bool {
	changed := false
	for _, w := range e.workers {
		if w.busy {
			continue
		}
		for _, rk := range w.ranks {
			if rk.Host == nil {
				continue
			}
			if e.opts.Observer != nil {
				e.opts.Observer.Focus(rk)
			}
			if rk.Host.Tick(now) {
				rk.WakeSleepers()
				w.poked = true
				changed = true
				if rk.Role == config.RoleDecode && len(e.pending[rk.Index]) > 0 {
					// Finished copies release held G1 blocks and
					// fences: capacity a waiting reservation may
					// need (see tryReservations).
					e.tryReservations(rk, now)
				}
			}
		}
	}
	return changed
}

// startPass starts a group pass: the ranks runnable now plan their batches
// in DP order; the others plan nothing
// (docs/model/engine.md ("Workers, DP ranks and group passes")).
func (e *Engine) startPass(w *worker, now vtime.Time) {
	w.busy, w.poked = true, false
	end := now
	for i, rk := range w.ranks {
		w.planned[i] = rk.Runnable()
		if !w.planned[i] {
			continue
		}
		if e.opts.Observer != nil {
			e.opts.Observer.Focus(rk)
			e.opts.Observer.PassStart(rk, now)
		}
		rk.passes++
		res := rk.Pass(now)
		if res.End > end {
			end = res.End
		}
	}
	w.end = end
	e.Passes++
}

// completePass ends w's group pass at w.end: every rank's engine boundary
// first, then the planned ranks' tokens, completions and next-turn
// readiness, all stamped with the group end.
func (e *Engine) completePass(w *worker) {
	end := w.end
	w.busy = false
	changed := false
	for _, rk := range w.ranks {
		if e.opts.Observer != nil {
			e.opts.Observer.Focus(rk)
		}
		if rk.Host != nil && rk.Host.Boundary(end) {
			rk.WakeSleepers()
			w.poked = true
		}
	}
	for i, rk := range w.ranks {
		if !w.planned[i] {
			continue
		}
		res := rk.Result()
		if res.Changed {
			changed = true
		}
		if rk.Host != nil && (len(res.Scheduled) > 0 || len(res.Emitted) > 0) {
			rk.Host.RankWorked()
		}
		e.commit(rk, res, end)
		if e.opts.Observer != nil {
			e.opts.Observer.PassEnd(rk, res, end)
		}
		if e.opts.Check {
			if err := e.check(rk); err != nil && e.checkErr == nil {
				e.checkErr = fmt.Errorf("after pass ending at %v on worker %d rank %d: %w", end, rk.Worker, rk.DP, err)
			}
		}
	}
	// Every decode rank of the group retries its waiting reservations, not
	// only the ranks that planned work: the boundary's finished copies may
	// have freed capacity on an unplanned one too (see tryReservations).
	for _, rk := range w.ranks {
		if rk.Role == config.RoleDecode {
			e.tryReservations(rk, end)
		}
	}
	if !changed {
		w.noopAt = end
	} else {
		w.noopAt = vtime.Unset()
	}
}

// notePrefillTime adds a bounded pass's step time to the records of the
// requests it did prefill work for (the scheduler's test of prefill work,
// docs/model/timing.md ("Per request")).
func (e *Engine) notePrefillTime(res *scheduler.PassResult) {
	d, compute := res.End-res.ComputeStart, res.Bound == timing.ComputeBound
	for _, s := range res.Scheduled {
		if s.Tokens >= 1 && (s.Before < s.Req.PromptLen || s.Tokens > 1) {
			if p := e.Records[s.Req.Index].Prefill; p != nil {
				p.Add(d, compute)
			}
		}
	}
}

// commit records a completed pass in the report and moves sessions on.
func (e *Engine) commit(rk *Rank, res *scheduler.PassResult, end vtime.Time) {
	e.CommittedPrefill += res.PrefillTokens
	if res.Bound != timing.NoBound && res.PrefillTokens > 0 && rk.Role != config.RoleDecode {
		e.notePrefillTime(res)
	}
	e.Preemptions += int64(len(res.Preempted))
	pool := rk.Role
	if pool == config.RoleAggregated {
		pool = "agg"
	}
	decode := rk.Role == config.RoleDecode
	for _, a := range res.Admissions {
		rec := &e.Records[a.Req.Index]
		reused := a.Reused
		if decode {
			// Decode admissions show the decode rank's reused prefix; the
			// request's reuse stays the prefill pool's
			// (docs/model/report.md ("Reuse and restored tokens"), a Decision).
			reused = rec.DecodeReused
			if !rec.DecodeAdmitMs.IsSet() {
				rec.DecodeAdmitMs = a.At
			}
		} else {
			if a.First {
				rec.FirstAdmitMs = a.At
				rec.FirstReused = a.Reused
				rec.FirstG1, rec.FirstHost, rec.HasHost = a.G1, a.Host, a.HasHost
				if e.pd {
					rec.PrefillAdmitMs = a.At
				}
			}
			rec.Reused = a.Reused
		}
		if a.Readmission {
			rec.Readmissions++
		}
		poolOrd := 1
		for _, h := range rec.Admissions {
			if h.Pool == pool {
				poolOrd++
			}
		}
		rec.Admissions = append(rec.Admissions, report.Admission{
			Ordinal: len(rec.Admissions) + 1, PoolOrdinal: poolOrd, Pool: pool,
			AtMs: a.At, Reused: reused, G1: a.G1, Host: a.Host, HasHost: a.HasHost, Readmission: a.Readmission})
	}
	if rk.Role == config.RolePrefill {
		for _, r := range res.Finished {
			if e.Records[r.Index].Status == report.StatusCanceled {
				rk.ReleaseSource(r, end) // canceled during its prefill
				continue
			}
			e.sourceHeld(rk, r, end)
		}
		for _, r := range res.Rejected {
			rec := &e.Records[r.Index]
			if rec.Status != "" {
				continue
			}
			rec.Status = report.StatusRejected
			rec.TerminalMs = end
			e.turnDone(r, end, false)
		}
		return
	}
	if e.canceled == 0 {
		for _, r := range res.Emitted {
			if rec := &e.Records[r.Index]; !rec.TokenAgain(end) {
				rec.Token(end)
			}
		}
	} else {
		for _, r := range res.Emitted {
			if rec := &e.Records[r.Index]; rec.Status == "" { // not canceled by the client meanwhile
				rec.Token(end)
			}
		}
	}
	for _, r := range res.Finished {
		rec := &e.Records[r.Index]
		if e.canceled > 0 && rec.Status != "" {
			continue
		}
		rec.Status = report.StatusCompleted
		rec.TerminalMs = end
		e.turnDone(r, end, true)
	}
	for _, r := range res.Rejected {
		rec := &e.Records[r.Index]
		if rec.Status != "" {
			continue
		}
		rec.Status = report.StatusRejected
		rec.TerminalMs = end
		e.turnDone(r, end, false)
	}
}

// turnDone hands a finished turn's session its next turn, or ends it.
func (e *Engine) turnDone(r *request.Request, at vtime.Time, completed bool) {
	e.done++
	if e.agentic != nil {
		r.Known = 0
		e.agenticDone(r, at, completed)
		return
	}
	s := &e.sessions[r.Session]
	ws := &e.wl.Sessions[r.Session]
	if e.wl.Accumulate {
		// The generated tokens join the session's history (its Seq, which r
		// shares).
		s.known = r.Known
	}
	r.Known = 0
	if e.slotCap != nil && len(r.Slots) == 0 {
		// The turn is done and its blocks released: its block table and
		// (without accumulation) identities are no longer read.
		r.Slots = nil
		if !e.wl.Accumulate {
			r.Seq = nil
		}
	}
	next := int(r.Turn) + 1
	if completed && next < len(ws.Turns) {
		e.arrivals.push(arrival{at: at + e.driver.Delay(ws.Turns[next].DelayMs), session: r.Session, turn: int32(next)})
		return
	}
	// A rejected turn ends its session
	// (docs/model/traffic.md ("A rejected turn ends its session"), a Decision).
	s.known, s.seq = 0, identity.Sequence{}
	e.driver.SessionDone(at, e.startSession)
}

func (e *Engine) startSession(s int, at vtime.Time) {
	if e.agentic != nil {
		e.startPlay(s, at)
		return
	}
	e.arrivals.push(arrival{at: at, session: int32(s), turn: 0})
}

// dispatch turns (session, turn) into a request and places it.
func (e *Engine) dispatch(sIdx, turn int32, now vtime.Time) {
	s := &e.sessions[sIdx]
	t := &e.wl.Sessions[sIdx].Turns[turn]
	r := &e.reqs[s.first+int(turn)]
	rec := &e.Records[r.Index]
	// The turn's content is appended run by run: a Mooncake hash id stands
	// for block_size copies of one token, and no token array is built
	// (docs/performance.md ("Dispatch without token arrays")).
	if e.wl.Accumulate {
		r.Known = s.known + contentLen(t)
	} else {
		r.Known = contentLen(t)
	}
	r.PromptLen = r.Known
	r.MaxOutput = t.OutputLength
	r.OutputIDs = t.OutputTokens
	rec.InputLength = r.PromptLen
	rec.ArrivalMs, rec.DispatchedMs = now, now

	var rk *Rank
	var h report.Routing
	if e.opts.Shard.on() {
		// Round robin (Shardable) reads no blocks: route first, and
		// build identities only for the shard's own requests.
		if rk, h = e.place.route(r, "agg"); !e.opts.Shard.owns(rk.Worker) {
			e.drop(r)
			return
		}
	}
	if e.wl.Accumulate {
		if s.seq.IDs == nil {
			n := sessionTokens(&e.wl.Sessions[sIdx])
			s.seq.IDs = make([]identity.ID, 0, n/e.bs+1)
		}
		r.Seq = &s.seq
	} else {
		n := t.ContentLength + t.OutputLength
		r.Seq = &identity.Sequence{IDs: make([]identity.ID, 0, n/e.bs+1)}
	}
	if t.RunLength > 0 {
		r.Seq.AppendContent(e.ids, t.Content, t.RunLength, t.ContentLength, e.bs, r.Index)
	}
	if e.slotCap != nil && r.Slots == nil {
		r.Slots = make([]int32, 0, e.slotCap[r.Index])
	}
	switch {
	case rk != nil: // routed above
	case e.pd:
		rk, h = e.prefillPlace.route(r, "prefill")
		r.MaxOutput = 1 // the hidden bootstrap token
	default:
		rk, h = e.place.route(r, "agg")
	}
	rk.Enqueue(r)
	e.workers[rk.Worker].poked = true
	rec.PrefillWorker = int(h.Worker)
	rec.Routing = append(rec.Routing, h)
}

// sessionTokens is the most tokens an accumulating session can reach.
func sessionTokens(s *trace.Session) int {
	n := 0
	for i := range s.Turns {
		n += s.Turns[i].ContentLength + s.Turns[i].OutputLength
	}
	return n
}

// contentLen is the number of tokens the turn's own content expands to.
func contentLen(t *trace.Turn) int {
	return max(0, min(t.ContentLength, len(t.Content)*t.RunLength))
}

// G2Stats sums the connector counters of every rank.
func (e *Engine) G2Stats() (s connector.Stats, evictions int64, ok bool) {
	seen := map[*g2.Tier]bool{}
	for _, rk := range e.ranks {
		if rk.Host == nil {
			continue
		}
		ok = true
		st := rk.Host.Stats
		s.Lookups += st.Lookups
		s.LookupHits += st.LookupHits
		s.LookupDefers += st.LookupDefers
		s.StoresPrepared += st.StoresPrepared
		s.StoreBlocks += st.StoreBlocks
		s.StoreBytes += st.StoreBytes
		s.LoadsQueued += st.LoadsQueued
		s.LoadBlocks += st.LoadBlocks
		s.LoadBytes += st.LoadBytes
		if t := rk.Host.Tier(); !seen[t] {
			seen[t] = true
			evictions += t.Evictions
		}
	}
	return s, evictions, ok
}

type arrival struct {
	at      vtime.Time
	session int32
	turn    int32
}

// arrivals are ordered by time, then session index, then turn
// (docs/model/traffic.md ("Load models"): same-instant turns go in file
// order).
func (a arrival) before(b arrival) bool {
	if !a.at.Same(b.at) {
		return a.at < b.at
	}
	if a.session != b.session {
		return a.session < b.session
	}
	return a.turn < b.turn
}

// Dispatched is the number of requests dispatched so far.
func (e *Engine) Dispatched() int {
	n := 0
	for i := range e.Records {
		if e.Records[i].DispatchedMs.IsSet() {
			n++
		}
	}
	return n
}

// RunStats returns the run-level figures the summary needs.
func (e *Engine) RunStats() report.Run {
	run := report.Run{CommittedPrefillTokens: e.CommittedPrefill, Preemptions: e.Preemptions, Passes: e.Passes,
		Workers: e.workerLoads()}
	for _, r := range e.cfg.Roles() {
		p := r.Parallelism
		run.GPUs += p.Replicas * p.Pipeline * p.Tensor * p.AttentionData
		if ho := r.KVCache.HostOffload; ho != nil && ho.KVCR != nil {
			run.KVCR = true
		}
	}
	if st, ev, ok := e.G2Stats(); ok {
		run.G2 = &report.G2{Lookups: st.Lookups, LookupHits: st.LookupHits, LookupDefers: st.LookupDefers,
			StoreJobs: st.StoresPrepared, StoreBlocks: st.StoreBlocks, StoreBytes: st.StoreBytes,
			LoadJobs: st.LoadsQueued, LoadBlocks: st.LoadBlocks, LoadBytes: st.LoadBytes, Evictions: ev}
	}
	if len(e.g3Stores) > 0 {
		g := &report.G3{}
		for _, st := range e.g3Stores {
			x := st.Stats
			g.LookupProbes += x.LookupProbes
			g.LookupHits += x.LookupHits
			g.LookupPending += x.LookupPending
			g.Read.Add(x.Read.SubmittedJobs, x.Read.CompletedJobs, x.Read.CancelledJobs, x.Read.CompletedBytes, float64(x.Read.TransferMs))
			g.Write.Add(x.Write.SubmittedJobs, x.Write.CompletedJobs, x.Write.CancelledJobs, x.Write.CompletedBytes, float64(x.Write.TransferMs))
			g.Evictions += x.Evictions
			g.CrossWorkerReadBlocks += x.CrossWorkerReadBlocks
			g.BypassedRestores += x.BypassedRestores
			r, p := st.Counts()
			g.ResidentBlocks += int64(r)
			g.PendingBlocks += int64(p)
		}
		run.G3 = g
	}
	for _, d := range e.shared {
		run.Domains = append(run.Domains, report.Domain{CapacityBlocks: d.Tier.Capacity(),
			ResidentBlocks: d.Tier.NumResident(), UsedBlocks: d.Tier.Used()})
	}
	return run
}
