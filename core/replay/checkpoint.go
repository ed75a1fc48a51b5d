package replay

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
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
// per loaded job. Every run toward a window takes snapshots on its way,
// spaced so that copying costs a fraction of running, and the store keeps
// those that leave the smallest gaps: windows that come back to a part of
// the run find a snapshot near them. A Checkpoints serves one config and
// workload at a time; another drops what it holds. It is safe for
// concurrent use (jobs wait for each other).
type Checkpoints struct {
	mu  sync.Mutex
	key string
	wl  *trace.Workload
	// snaps are in run order.
	snaps []checkpoint
	size  int64            // the bytes the first snapshot copied
	pages int64            // the identity pages the snapshots share
	off   bool             // not one snapshot fits MaxBytes
	cp    *deepcopy.Copier // kept: it knows the engine's types and sizes
	// Max is the most snapshots kept (DefaultCheckpoints when 0).
	// MaxBytes, when set, lowers Max to what fits under it: the identity
	// table's pages, which the snapshots share (identity.Table.PageBytes,
	// at the latest snapshot), and the bytes the first snapshot copied
	// (deepcopy.Copier.Copied) for each. When not one fits, the store
	// keeps none and takes no more (off): its windows run from the start. Every, when set, is the group passes
	// between the snapshots a run takes; by default they are
	// DefaultEvery apart until the first one's size is known, then
	// that size over CopyBytesPerPass.
	Max      int
	MaxBytes int64
	Every    int64
	// Taken counts the snapshots taken, Restored the runs served from one
	// (tests and measurements).
	Taken, Restored int

	// warm is the engine Warm runs on toward the end of the run between
	// calls (nil: none under way), next the group pass of its next
	// snapshot; warmed says a warm-up reached the end.
	warm   *engine.Engine
	next   int64
	warmed bool
}

type checkpoint struct {
	e      *engine.Engine
	passes []int // each rank's passes run
	group  int64 // group passes run
}

// DefaultCheckpoints is Checkpoints.Max when unset.
const DefaultCheckpoints = 8

// DefaultEvery is the group passes before the first snapshot (Every unset).
const DefaultEvery = 4096

// CopyBytesPerPass spaces snapshots by their size (Every unset): one is
// taken every size/CopyBytesPerPass group passes. A copy of the Mooncake
// conversation run's engine (23 MB) takes about 30 ms natively, what
// 20,000 of its group passes take at 1.5 µs each; 200 bytes a pass spaces
// its snapshots about 120,000 group passes apart, keeping their copying
// near a sixth of the run's time. In the page, 216,000 apart made window
// moves slower (median 0.99–1.06 s against 0.83–0.86).
const CopyBytesPerPass = 200

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
	c.warm = nil // a warm-up under way is abandoned; its snapshots stay
	from := firsts(win, ranges)
	e, err := c.start(cfg, wl, opts, from)
	if err != nil {
		return nil, nil, err
	}
	rr, ok := e.Observer().(*record.Recorder)
	if !ok {
		return nil, nil, fmt.Errorf("internal error: a checkpoint's engine records with %T", e.Observer())
	}
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

// Warm runs job's run on toward its end while more says so, from the last
// snapshot (or where the last call stopped), taking snapshots on the way:
// the page's pass view warms its store while the user looks at the first
// window, so that a move anywhere, the first included, starts near its
// window instead of from the first pass (docs/model/engine.md
// ("Checkpoints")). It takes them WarmEvery apart and the store keeps
// those that leave the smallest gaps, so the budget ends spread over the
// whole run. It returns done when the run has ended, and at once when
// the store keeps none (MaxBytes) or was warmed before for this job. A
// window run (job's Capture.StopAfterWindow) in between abandons the
// warm-up; its snapshots stay. job must be one the store serves: its
// Checkpoints, a window of pass numbers, no agentic load.
func (c *Checkpoints) Warm(job Job, more func() bool) (done bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			done, err = true, internalError(v)
		}
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.warm == nil {
		cfg, wl, _, e := prepare(&job, true)
		if e != nil {
			return true, e
		}
		opts := engine.Options{Check: job.Check, MaxPasses: job.Limits.MaxPasses, NoFastForward: job.NoFastForward}
		c.match(cfg, wl, opts)
		if c.warmed || c.off || wl.Agentic {
			return true, nil
		}
		if c.warm, err = c.from(cfg, wl, opts, len(c.snaps)-1); err != nil {
			c.warm = nil
			return true, err
		}
		c.next = c.warm.Passes + c.warmGap()
	}
	e := c.warm
	var snapErr error
	stop := false // the engine may ask again at the same instant
	e.Resume(func() bool {
		if e.Passes >= c.next && !c.off {
			if snapErr = c.take(e); snapErr != nil {
				return true
			}
			c.next = e.Passes + c.warmGap()
		}
		stop = stop || !more()
		return stop
	}, nil)
	_, err = e.RunUntil(vtime.Never)
	if err = cmp.Or(err, snapErr); err != nil || !e.Stopped() {
		c.warm, c.warmed = nil, err == nil
		return true, err
	}
	return false, nil
}

// WarmEvery divides a run's snapshot spacing (gap) for a warm-up. The
// spacing keeps a run's copying near a sixth of its time (CopyBytesPerPass),
// which on the Mooncake trace is one copy every ~120,000 of its ~216,000
// group passes: a warm-up at that spacing would fill one or two of the
// six places the page's budget (wasm.ScrubBytes) holds. A quarter of it
// takes about seven, which the store thins to the six that leave the
// smallest gaps; the copying, about 0.9 s in Chromium, runs in the
// background.
const WarmEvery = 4

// warmGap is the group passes between two snapshots of a warm-up (Every
// when set).
func (c *Checkpoints) warmGap() int64 {
	if c.Every > 0 {
		return c.Every
	}
	return c.gap() / WarmEvery
}

// Kept is the number of snapshots the store holds.
func (c *Checkpoints) Kept() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.snaps)
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
	c.key, c.wl, c.snaps, c.size, c.pages, c.off = key, wl, nil, 0, 0, false
	c.warm, c.warmed = nil, false
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

// start returns an engine, with a pending recorder, with every rank at
// least two passes before its first pass of the window (before): a copy
// of the last snapshot before it, or a new engine, run on toward the
// window until a rank is two passes before it (recorded runs move a rank
// at most one pass an instant, so every rank is still before its window
// then) or the run ends, taking snapshots on the way.
func (c *Checkpoints) start(cfg *config.Config, wl *trace.Workload, opts engine.Options, first func(int) int) (*engine.Engine, error) {
	k := c.last(first)
	e, err := c.from(cfg, wl, opts, k)
	if err != nil {
		return nil, err
	}
	near := func() bool {
		for i, p := range e.RankPassesRun() {
			if p+2 >= first(i) {
				return true
			}
		}
		return false
	}
	if near() {
		return e, nil // a fresh engine for a window from pass 1, or a snapshot just before
	}
	next := e.Passes + c.gap()
	var snapErr error
	e.Resume(func() bool {
		if e.Passes >= next && !c.off {
			if err := c.take(e); err != nil {
				snapErr = err
				return true
			}
			next = e.Passes + c.gap()
		}
		return near()
	}, opts.Progress)
	if _, err := e.RunUntil(vtime.Never); err != nil {
		return nil, err
	}
	if snapErr != nil {
		return nil, snapErr
	}
	if before(e.RankPassesRun(), first) {
		return e, nil
	}
	// A rank moved more than one pass in an instant: go back to what is
	// surely before the window.
	return c.from(cfg, wl, opts, c.last(first))
}

// last is the index of the last snapshot before every rank's first pass
// of the window (-1: none).
func (c *Checkpoints) last(first func(int) int) int {
	k := len(c.snaps) - 1
	for k >= 0 && !before(c.snaps[k].passes, first) {
		k--
	}
	return k
}

// from returns a copy of snapshot k, or a new engine with a pending
// recorder when k is -1.
func (c *Checkpoints) from(cfg *config.Config, wl *trace.Workload, opts engine.Options, k int) (*engine.Engine, error) {
	if k >= 0 {
		c.Restored++
		return c.snaps[k].e.Snapshot(c.copier())
	}
	opts.Observer, opts.Stop = record.NewPendingRecorder(), nil
	return engine.New(cfg, wl, opts)
}

// gap is the group passes between two snapshots a run takes.
func (c *Checkpoints) gap() int64 {
	switch {
	case c.Every > 0:
		return c.Every
	case c.size == 0:
		return DefaultEvery
	}
	return max(DefaultEvery, c.size/CopyBytesPerPass)
}

// take adds a snapshot of e in run order; over the limit, it drops the
// one (never the last) whose neighbours are closest, so the gaps stay
// even.
func (c *Checkpoints) take(e *engine.Engine) error {
	cp := c.copier()
	s, err := e.Snapshot(cp)
	if err != nil {
		return err
	}
	c.Taken++
	if c.size == 0 {
		c.size = max(cp.Copied(), 1)
	}
	c.pages = max(c.pages, e.Identities().PageBytes())
	at, _ := slices.BinarySearchFunc(c.snaps, e.Passes, func(x checkpoint, g int64) int { return cmp.Compare(x.group, g) })
	c.snaps = slices.Insert(c.snaps, at, checkpoint{e: s, passes: e.RankPassesRun(), group: e.Passes})
	if c.limit() == 0 {
		// Not even one fits the budget: keep none, take no more.
		clear(c.snaps)
		c.snaps, c.off = nil, true
		return nil
	}
	for len(c.snaps) > c.limit() {
		drop, span := 0, int64(math.MaxInt64)
		for i := range len(c.snaps) - 1 {
			prev := int64(0)
			if i > 0 {
				prev = c.snaps[i-1].group
			}
			if d := c.snaps[i+1].group - prev; d < span {
				drop, span = i, d
			}
		}
		c.snaps = slices.Delete(c.snaps, drop, drop+1)
	}
	return nil
}

// limit is the most snapshots kept (Max, MaxBytes).
func (c *Checkpoints) limit() int {
	limit := cmp.Or(c.Max, DefaultCheckpoints)
	if c.MaxBytes > 0 && c.size > 0 {
		limit = min(limit, int(max(0, (c.MaxBytes-c.pages)/c.size)))
	}
	return limit
}

// copier copies an engine whose observer is a pending recorder.
func (c *Checkpoints) copier() *deepcopy.Copier {
	if c.cp == nil {
		c.cp = engine.NewCopier()
	}
	return c.cp
}

// result is the Result of a finished (or stopped) engine, as RunWith
// makes it.
func result(cfg *config.Config, e *engine.Engine) *Result {
	res := &Result{Config: cfg, Engine: e, Records: e.Records, Stats: e.RunStats(), RankPasses: e.MostRankPasses()}
	res.Summary = report.Summarize(e.Records, e.Dispatched(), res.Stats)
	res.Summary.Agentic = agenticReport(cfg, e)
	return res
}
