package engine

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/internal/deepcopy"
	"github.com/kvsim/kvsim/core/trace"
)

// NewCopier returns the copier a checkpoint uses: the config and the
// workload are shared (a run never changes them) and the identity table
// is copied by its own Snapshot, which shares what it never rewrites
// (docs/model/engine.md ("Checkpoints")). The observer is copied like the
// rest (a pending record.Recorder holds little).
func NewCopier() *deepcopy.Copier {
	c := &deepcopy.Copier{}
	c.Share(reflect.TypeFor[config.Config]())
	c.Share(reflect.TypeFor[trace.Workload]())
	c.Custom(reflect.TypeFor[identity.Table](), func(p unsafe.Pointer) unsafe.Pointer {
		return unsafe.Pointer((*identity.Table)(p).Snapshot())
	})
	return c
}

// checkpointable tells whether e can be snapshot: an agentic run's
// replayed profile or a sharded run re-creates engines, so only plain
// runs are (the others are refused, never copied wrong).
func (e *Engine) checkpointable() error {
	switch {
	case e.wl.Agentic:
		return fmt.Errorf("not supported yet: checkpoints of an agentic run")
	case e.opts.Shard.on():
		return fmt.Errorf("not supported yet: checkpoints of a sharded run")
	}
	return nil
}

// Snapshot returns a copy of e that runs on independently: a checkpoint.
// It is taken between two instants (from Options.Stop, or after RunUntil
// returned). The copy has no Stop or Progress callback (Resume sets them);
// its observer is its own copy of e's.
func (e *Engine) Snapshot(c *deepcopy.Copier) (*Engine, error) {
	if err := e.checkpointable(); err != nil {
		return nil, err
	}
	stop, progress, rules := e.opts.Stop, e.opts.Progress, e.opts.Rules
	e.opts.Stop, e.opts.Progress, e.opts.Rules = nil, nil, nil
	defer func() { e.opts.Stop, e.opts.Progress, e.opts.Rules = stop, progress, rules }()
	cp, err := deepcopy.Copy(c, e)
	if err != nil {
		return nil, fmt.Errorf("internal error: checkpoint: %w", err)
	}
	return cp, nil
}

// Resume sets the callbacks of a snapshot about to run on (see Options).
func (e *Engine) Resume(stop func() bool, progress func(done, total int)) {
	e.opts.Stop, e.opts.Progress = stop, progress
	e.stopped = false
}

// Observer is the run's observer (a snapshot's own copy of it).
func (e *Engine) Observer() Observer { return e.opts.Observer }

// RankPassesRun is how many passes each rank has run so far.
func (e *Engine) RankPassesRun() []int {
	n := make([]int, len(e.ranks))
	for i, rk := range e.ranks {
		n[i] = rk.passes
	}
	return n
}
