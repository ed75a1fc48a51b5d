package replay

import (
	"cmp"
	"encoding/json"
	"sync"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/internal/deepcopy"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/trace"
	"github.com/kvsim/kvsim/core/vtime"
)

// Checkpoints keeps snapshots of one job's engine, taken as its pass
// windows are recorded (docs/model/engine.md ("Checkpoints")), so that
// recording a window far into the run starts from the nearest snapshot
// before it instead of from the first pass. The page's pass view keeps one
// per loaded job: moving the window back costs at most the distance
// between two snapshots; moving it forward past the last one runs on from
// there, taking more. A Checkpoints serves one config and workload at a
// time; another drops what it holds. It is safe for concurrent use (jobs
// wait for each other).
type Checkpoints struct {
	mu  sync.Mutex
	key string
	wl  *trace.Workload
	// snaps are in run order, every group passes apart (doubled each
	// time their number passes Max); ended says the run ran out after the
	// last one, so there are no more to take.
	snaps []checkpoint
	every int64
	ended bool
	// Max is the most snapshots kept (DefaultCheckpoints when 0); Every
	// the group passes between the first ones (DefaultEvery when 0).
	// MaxBytes, when set, lowers Max to what fits: the bytes the first
	// snapshot copied (deepcopy.Copier.Copied; the identity table's share
	// and the recorder's placeholders aside) times the snapshots kept stay
	// under it, keeping at least two.
	Max      int
	Every    int64
	MaxBytes int64
	size     int64 // the bytes of the first snapshot
	// Taken counts the snapshots taken, Restored the runs served from one
	// (tests and measurements).
	Taken, Restored int
}

type checkpoint struct {
	e      *engine.Engine
	passes []int // each rank's passes run
	group  int64 // group passes run
}

// DefaultCheckpoints is Checkpoints.Max when unset.
const DefaultCheckpoints = 8

// DefaultEvery is Checkpoints.Every when unset.
const DefaultEvery = 4096

// NewCheckpoints returns an empty store.
func NewCheckpoints() *Checkpoints { return &Checkpoints{} }

// usable tells whether a job's window can be recorded from a checkpoint:
// a window of pass numbers, stopped after it, on one engine (the
// checkpoint run is never split; engine.Options.MaxPasses counts the same
// group passes from a snapshot as from the start).
func usable(job *Job, wl *trace.Workload) bool {
	w := job.Capture.Window
	return job.Checkpoints != nil && job.Capture.StopAfterWindow && !w.Whole() && !w.Time &&
		!wl.Agentic
}

// run records win (each rank's ranges, or the window's pass numbers when
// ranges is nil) from the nearest snapshot before it, and returns the run
// with its recorder.
func (c *Checkpoints) run(cfg *config.Config, wl *trace.Workload, opts engine.Options, win record.Window, ranges []record.PassRange) (*Result, *record.Recorder, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.match(cfg, wl, opts)
	from := firsts(win, ranges)
	e, err := c.start(cfg, wl, opts, from)
	if err != nil {
		return nil, nil, err
	}
	rr := e.Observer().(*record.Recorder)
	if err := rr.Window(win, ranges); err != nil {
		return nil, nil, err
	}
	e.Resume(rr.Past, opts.Progress)
	if _, err := e.RunUntil(vtime.Never); err != nil {
		return nil, nil, err
	}
	if err := e.Finish(); err != nil {
		return nil, nil, err
	}
	return result(cfg, e), rr, nil
}

// match drops the snapshots when the job's config, workload or engine
// options (a snapshot keeps those it was taken with) are not the ones they
// were taken of.
func (c *Checkpoints) match(cfg *config.Config, wl *trace.Workload, opts engine.Options) {
	b, err := json.Marshal(struct {
		Config               *config.Config
		Check, NoFastForward bool
		MaxPasses            int64
	}{cfg, opts.Check, opts.NoFastForward, opts.MaxPasses})
	key := string(b)
	if err != nil {
		key = ""
	}
	if key != "" && key == c.key && wl == c.wl {
		return
	}
	clear(c.snaps)
	c.key, c.wl, c.snaps, c.every, c.ended, c.size = key, wl, nil, 0, false, 0
}

// firsts is each rank's first pass of the window (math.MaxInt for a rank
// the window holds none of); with nil ranges every rank's is the window's.
func firsts(win record.Window, ranges []record.PassRange) func(rank int) int {
	return func(rank int) int {
		if ranges == nil {
			return int(max(win.From, 1))
		}
		if rank >= len(ranges) || ranges[rank].From > ranges[rank].To {
			return int(^uint(0) >> 1)
		}
		return ranges[rank].From
	}
}

// before tells whether a run whose ranks ran passes can still take the
// window: every rank is at least two passes before its first. A rank one
// pass before it is not: the window starts as that pass closes, so what
// the rest of that instant and the next ones change is in the window, and
// a snapshot taken later would have it in its state instead.
func before(passes []int, first func(int) int) bool {
	for k, p := range passes {
		if p+2 > first(k) {
			return false
		}
	}
	return true
}

// start returns an engine, with a pending recorder, before every rank's
// first pass of the window: a copy of the last snapshot before it, or,
// when that is the last one and the run goes on, the run taken on from it
// (or from the start) until a rank is two passes before the window, taking
// snapshots on the way.
func (c *Checkpoints) start(cfg *config.Config, wl *trace.Workload, opts engine.Options, first func(int) int) (*engine.Engine, error) {
	k := len(c.snaps) - 1
	for k >= 0 && !before(c.snaps[k].passes, first) {
		k--
	}
	if k >= 0 && (k < len(c.snaps)-1 || c.ended) {
		c.Restored++
		return c.restore(k)
	}
	var e *engine.Engine
	var err error
	if k >= 0 {
		c.Restored++
		e, err = c.restore(k)
	} else {
		opts.Observer, opts.Stop = record.NewPendingRecorder(), nil
		e, err = engine.New(cfg, wl, opts)
	}
	if err != nil {
		return nil, err
	}
	return c.extend(cfg, wl, e, opts, first)
}

// restore returns a copy of snapshot k.
func (c *Checkpoints) restore(k int) (*engine.Engine, error) {
	return c.snaps[k].e.Snapshot(copier())
}

// extend runs e on, taking snapshots, until a rank is two passes before
// its window (or the run ends): a rank runs at most one pass an instant
// when the run is recorded, so every rank is still before its window then; it returns e then, or a copy of the last
// snapshot before the window when another rank went past its first pass.
func (c *Checkpoints) extend(cfg *config.Config, wl *trace.Workload, e *engine.Engine, opts engine.Options, first func(int) int) (*engine.Engine, error) {
	if c.every == 0 {
		c.every = cmp.Or(c.Every, DefaultEvery)
	}
	next := e.Passes + c.every
	var snapErr error
	// near: a rank is two passes before its first, or the engine is
	// fresh (a window from pass 1 starts before the first event).
	near := func() bool {
		for i, p := range e.RankPassesRun() {
			if p+2 >= first(i) {
				return true
			}
		}
		return false
	}
	if near() {
		return e, nil
	}
	e.Resume(func() bool {
		if e.Passes >= next {
			if err := c.take(e); err != nil {
				snapErr = err
				return true
			}
			next = e.Passes + c.every
		}
		return near()
	}, opts.Progress)
	if _, err := e.RunUntil(vtime.Never); err != nil {
		return nil, err
	}
	if snapErr != nil {
		return nil, snapErr
	}
	if !e.Stopped() {
		c.ended = true
	}
	if before(e.RankPassesRun(), first) {
		return e, nil
	}
	k := len(c.snaps) - 1
	for k >= 0 && !before(c.snaps[k].passes, first) {
		k--
	}
	if k >= 0 {
		return c.restore(k)
	}
	opts.Observer, opts.Stop = record.NewPendingRecorder(), nil
	return engine.New(cfg, wl, opts)
}

// take adds a snapshot of e, thinning the snapshots to every other one
// (and doubling their distance) when they are more than Max.
func (c *Checkpoints) take(e *engine.Engine) error {
	cp := copier()
	s, err := e.Snapshot(cp)
	if err != nil {
		return err
	}
	c.Taken++
	if c.size == 0 {
		c.size = max(cp.Copied(), 1)
	}
	c.snaps = append(c.snaps, checkpoint{e: s, passes: e.RankPassesRun(), group: e.Passes})
	if len(c.snaps) > c.limit() {
		kept := c.snaps[:0]
		for i, s := range c.snaps {
			if i%2 == 1 {
				kept = append(kept, s)
			}
		}
		clear(c.snaps[len(kept):])
		c.snaps = kept
		c.every *= 2
	}
	return nil
}

// limit is the most snapshots kept (Max, MaxBytes).
func (c *Checkpoints) limit() int {
	limit := cmp.Or(c.Max, DefaultCheckpoints)
	if c.MaxBytes > 0 && c.size > 0 {
		limit = min(limit, max(2, int(c.MaxBytes/c.size)))
	}
	return limit
}

// copier copies an engine whose observer is a pending recorder.
func copier() *deepcopy.Copier {
	cp := engine.NewCopier()
	record.AddCopyRules(cp)
	return cp
}

// result is the Result of a finished (or stopped) engine, as RunWith
// makes it.
func result(cfg *config.Config, e *engine.Engine) *Result {
	res := &Result{Config: cfg, Engine: e, Records: e.Records, Stats: e.RunStats(), RankPasses: e.MostRankPasses()}
	res.Summary = report.Summarize(e.Records, e.Dispatched(), res.Stats)
	res.Summary.Agentic = agenticReport(cfg, e)
	return res
}
