// Package replay is the one entry point every front end uses (the CLI, the
// wasm bridge, the Cloudflare worker, sweeps): build the workload a config
// describes, run the engine, and encode the report. It does no file or
// network I/O itself; callers hand it a function that opens trace paths.
package replay

import (
	"fmt"
	"io"
	"path"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/trace"
)

// Opener opens a trace path as written in the config, resolved against the
// config's directory by the caller.
type Opener func(path string) (io.ReadCloser, error)

// Workload builds the request population cfg describes.
func Workload(cfg *config.Config, open Opener) (*trace.Workload, error) {
	src := cfg.Traffic.Source
	bs := engineBlockSize(cfg)
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
			return nil, fmt.Errorf("traffic.source.paths: this front end cannot open trace files")
		}
		p := src.Paths[0]
		f, err := open(p)
		if err != nil {
			return nil, fmt.Errorf("traffic.source.paths[0]: %w", err)
		}
		defer f.Close()
		return trace.Read(f, trace.Options{Name: path.Base(p), Format: src.Format, BlockSize: src.BlockSize})
	}
	return nil, fmt.Errorf("traffic.source.type: unknown source %q", src.Type)
}

func engineBlockSize(cfg *config.Config) int {
	for _, r := range cfg.Roles() {
		return r.KVCache.BlockSize
	}
	return 64
}

// Result is one finished run.
type Result struct {
	Config  *config.Config
	Engine  *engine.Engine
	Summary report.Summary
	// Records holds every request's record in request order.
	Records []report.Request
	// Record is the per-pass record's passes.jsonl text, when the caller
	// asked for it (front ends fill it; the core never does).
	Record []byte
}

// Run replays wl under cfg.
func Run(cfg *config.Config, wl *trace.Workload, opts engine.Options) (*Result, error) {
	e, err := engine.New(cfg, wl, opts)
	if err != nil {
		return nil, err
	}
	if err := e.Run(); err != nil {
		return nil, err
	}
	res := &Result{Config: cfg, Engine: e, Records: e.Records}
	res.Summary = report.Summarize(e.Records, e.Dispatched(), e.RunStats())
	return res, nil
}

// PredictionJSON is prediction.json.
func (r *Result) PredictionJSON() []byte { return report.PredictionJSON(r.Summary) }

// SummaryJSON is the summary as one JSON object on one line.
func (r *Result) SummaryJSON() []byte { return report.SummaryJSON(r.Summary) }

// RequestsJSONL is requests.jsonl: terminal requests in order of terminal
// time, ties by request id.
func (r *Result) RequestsJSONL() []byte { return report.RequestsJSONL(r.Records) }
