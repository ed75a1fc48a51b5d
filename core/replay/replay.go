// Package replay is the one door into the core. A front end (the CLI, the
// browser's Web Worker, the Cloudflare Worker's API, a sweep) describes a
// replay as a Job: the config text and its --set overrides, where traces
// come from, what to capture and the limits that bound it. Run parses the
// config, checks the limits, builds the workload, runs the engine and
// encodes the report, and returns an Output or one positioned *Error
// (Kind: config, trace, limit, stalled or internal). Front ends import this
// package, never the engine, the scheduler, the connector or the pools
// (TestFrontEndsUseTheDoor enforces it).
//
// It does no file or network I/O: a front end that reads files hands it an
// Opener (Traces.Files). RunWith is the engine-level entry for the core's
// own tests and benchmarks, which switch engine options one by one.
package replay

import (
	"errors"
	"fmt"
	"path"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/trace"
)

// Workload builds the request population cfg describes. A trace path that
// open cannot serve is a KindTrace *Error placed at traffic.source.paths.
func Workload(cfg *config.Config, open Opener) (*trace.Workload, error) {
	src := cfg.Traffic.Source
	bs := blockSize(cfg)
	switch src.Type {
	case config.SourceSynthetic:
		return trace.Synthetic(trace.SyntheticSpec{InputTokens: src.InputTokens, OutputTokens: src.OutputTokens,
			CachedPrefixTokens: src.CachedPrefixTokens, Requests: cfg.Traffic.Stop.Requests, EngineBlockSize: bs}), nil
	case config.SourceSyntheticSession:
		return trace.SyntheticSessions(trace.SessionSpec{NewInputTokensPerTurn: src.NewInputTokensPerTurn,
			OutputTokensPerTurn: src.OutputTokensPerTurn, Turns: src.Session.Turns, Sessions: cfg.Traffic.Stop.Sessions,
			PrefixGroups: src.Session.PrefixGroups, EngineBlockSize: bs, SharedPrefixRatio: src.Session.SharedPrefixRatio,
			InterTurnDelayMs: src.Session.InterTurnDelayMs}), nil
	case config.SourceTrace:
		if open == nil {
			return nil, traceError(cfg, "this front end cannot open trace files")
		}
		p := src.Paths[0]
		f, err := open(p)
		if err != nil {
			return nil, traceError(cfg, err.Error())
		}
		defer f.Close()
		return trace.Read(f, trace.Options{Name: path.Base(p), Format: src.Format, BlockSize: src.BlockSize,
			NestedTimestampBasis: src.NestedTimestampBasis})
	}
	return nil, AsError(cfg.Refuse("traffic.source.type", fmt.Sprintf("unknown source %q", src.Type)))
}

// traceError is a trace that cannot be opened (Run places it at the config
// text that names it).
func traceError(cfg *config.Config, msg string) *Error {
	return &Error{Kind: KindTrace, File: cfg.Name, Path: "traffic.source.paths[0]", Msg: msg}
}

// Result is one finished engine run (RunWith).
type Result struct {
	Config *config.Config
	// Engine is the run's engine (nil for a run split across engines,
	// whose merged counters are Stats).
	Engine  *engine.Engine
	Stats   report.Run
	Summary report.Summary
	// Records holds every request's record in request order.
	Records []report.Request
	// RankPasses is the most passes a DP rank ran.
	RankPasses int
}

// RunWith replays wl under cfg with every engine option available. It is
// the engine-level entry for the core's tests and benchmarks; front ends
// call Run.
func RunWith(cfg *config.Config, wl *trace.Workload, opts engine.Options) (*Result, error) {
	e, err := engine.New(cfg, wl, opts)
	if err != nil {
		return nil, err
	}
	// An agentic profile builds a number of play instances; when the run
	// needs more, it is replayed (deterministically) with four times as many.
	for err = e.Run(); errors.Is(err, engine.ErrProfileBudget); err = e.Run() {
		if opts.ProfilePlays <= 0 {
			opts.ProfilePlays = engine.DefaultProfileBudget(cfg.Traffic.Load.AgenticLanes)
		}
		opts.ProfilePlays *= 4
		if opts.Observer != nil {
			return nil, cfg.Refuse("traffic.load.agentic_profile", fmt.Sprintf(
				"not supported yet: recording the passes of a profile that needs more than %d play instances", opts.ProfilePlays/4))
		}
		if e, err = engine.New(cfg, wl, opts); err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	return result(cfg, e), nil
}

// agenticReport copies the engine's snapshot, warmup and profile evidence
// into the report (nil when no agentic load control is on).
func agenticReport(cfg *config.Config, e *engine.Engine) *report.Agentic {
	cuts := e.Snapshots()
	if cuts == nil {
		return nil
	}
	a := &report.Agentic{Seed: cfg.Traffic.Load.AgenticSnapshot.Seed}
	for _, c := range cuts {
		a.Snapshots = append(a.Snapshots, report.Snapshot{Lane: c.Lane, Play: c.Play, TStarMs: c.TStarMs,
			FirstMs: c.FirstMs, LastMs: c.LastMs, History: c.History, Remaining: c.Live, Primer: len(c.Primers)})
	}
	if w := e.Warmup(); w != nil {
		a.Phases = &report.Phases{ProfileStartMs: w.ProfileStartMs, QuiescentMs: w.QuiescentMs}
		for _, l := range w.Lanes {
			a.Phases.Lanes = append(a.Phases.Lanes, report.WarmupLane{Primers: l.Primers, WarmupCompleted: l.WarmupCompleted})
		}
	}
	if p := e.Profile(); p != nil {
		a.Profile = &report.Profile{StartMs: p.StartMs, CutoffMs: p.CutoffMs, GraceEndMs: p.GraceEndMs,
			FinishedAtMs: p.FinishedAtMs, PlaysStarted: p.PlaysStarted, PlaysCompleted: p.PlaysCompleted, Issued: p.Issued, Successful: p.Successful,
			Canceled: p.Canceled, NeverIssued: p.NeverIssued, ClientInFlight: p.ClientInFlight, IdleShift: len(p.IdleShifts)}
	}
	return a
}

// PredictionJSON is prediction.json.
func (r *Result) PredictionJSON() []byte { return report.PredictionJSON(r.Summary) }

// SummaryJSON is the summary as one JSON object on one line.
func (r *Result) SummaryJSON() []byte { return report.SummaryJSON(r.Summary) }

// RequestsJSONL is requests.jsonl: terminal requests in order of terminal
// time, ties by request id.
func (r *Result) RequestsJSONL() []byte { return report.RequestsJSONL(r.Records) }
