package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/kvsim/kvsim/core/sweep"
	"github.com/kvsim/kvsim/wasm/proto"
)

// A sweepJob is a sweep as the page describes it: the config text and its
// name (the built-in §A (docs/model/cases.md) config is "traces/connectors.yaml", as `kvsim
// sweep` names it), --set overrides, the --vary arguments and uploaded
// traces. Every sweep message carries it, so a worker that has not seen the
// sweep before builds the plan itself (core/sweep's plans are cheap).
type sweepJob struct {
	Config, Name string
	Sets, Vary   []string
	Traces       map[string]string
}

// key identifies the spec for the plan cache.
func (s *sweepJob) key() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// spec is the core/sweep spec. Dir is "." as for `kvsim sweep` with the
// built-in config or a config in the current directory.
func (s *sweepJob) spec() sweep.Spec {
	name := s.Name
	if name == "" {
		name = "config.yaml"
	}
	return sweep.Spec{Name: name, Dir: ".", Data: []byte(s.Config), Sets: s.Sets, Vary: s.Vary}
}

// sweepCache holds the plan of the last sweep this worker served.
var sweepCache struct {
	key  string
	plan *sweep.Plan
}

// plan validates the sweep (NewPlan's checks, then the browser's size
// bound), reusing the plan of the same spec.
func (s *sweepJob) plan() (*sweep.Plan, *jobError) {
	k := s.key()
	if sweepCache.plan != nil && sweepCache.key == k {
		return sweepCache.plan, nil
	}
	p, err := sweep.NewPlan(s.spec())
	if err != nil {
		return nil, sweepError(err)
	}
	if p.Len() > proto.MaxSweepPoints {
		return nil, &jobError{Kind: "sweep", Msg: fmt.Sprintf("the grid has %d points; the browser runs at most %d (kvsim sweep has no limit)",
			p.Len(), proto.MaxSweepPoints)}
	}
	sweepCache.key, sweepCache.plan = k, p
	return p, nil
}

// sweepError places a sweep error: a --vary problem goes next to the
// grid, a point that failed to run keeps its replay error's kind, a config
// problem is the config's error.
func sweepError(err error) *jobError {
	if se, ok := err.(*sweep.Error); ok {
		je := &jobError{Kind: "sweep", Msg: se.Error(), Path: se.Arg}
		if se.Err != nil {
			je.Kind = asJobError(se.Err).Kind
		}
		return je
	}
	return asJobError(err)
}

// recovered turns a panic into an internal error (without a stack: the
// page never shows one).
func recovered(r any) *jobError {
	return &jobError{Kind: "internal", Msg: fmt.Sprintf("internal error: %v", r)}
}

// info describes the plan for the page: the axes, the x axis and the
// plots' lines. The lines come from core/sweep's own Series grouping,
// applied to a result whose only column is the point index.
func (s *sweepJob) info() (out proto.SweepPlan, jerr *jobError) {
	defer func() {
		if r := recover(); r != nil {
			jerr = recovered(r)
		}
	}()
	p, jerr := s.plan()
	if jerr != nil {
		return out, jerr
	}
	out.Points, out.X = p.Len(), p.XAxis()
	for i := range p.Axes {
		a := &p.Axes[i]
		out.Axes = append(out.Axes, proto.SweepAxis{Path: a.Path, Values: a.Values, Numeric: a.Numeric()})
	}
	if out.X < 0 {
		return out, nil
	}
	out.XLabel = p.Axes[out.X].Path
	if strings.HasSuffix(out.XLabel, "num_host_blocks") {
		out.XLabel = "G2 size (blocks)"
	}
	const col = "point"
	fake := &sweep.Result{Plan: p, Rows: make([]map[string]string, p.Len())}
	for i := range fake.Rows {
		fake.Rows[i] = map[string]string{col: strconv.Itoa(i)}
	}
	for _, ser := range fake.Series(out.X, col) {
		l := proto.SweepLine{Name: ser.Name, X: ser.X}
		for _, y := range ser.Y {
			l.Points = append(l.Points, int(y))
		}
		out.Lines = append(out.Lines, l)
	}
	return out, nil
}

// point evaluates point i (sweep.Plan.Evaluate, as `kvsim sweep` does for
// every point) and returns its summary and the sizing columns.
func (s *sweepJob) point(i int) (summary []byte, pt proto.SweepPoint, jerr *jobError) {
	defer func() {
		if r := recover(); r != nil {
			jerr = recovered(r)
		}
	}()
	p, jerr := s.plan()
	if jerr != nil {
		return nil, pt, jerr
	}
	j := &job{Traces: s.Traces}
	runtime.GC() // the last point's engine is garbage (job.run says why)
	start := time.Now()
	summary, err := p.Evaluate(i, j.traces(), sweep.Options{})
	if err != nil {
		return nil, pt, sweepError(err)
	}
	pt.ElapsedMs = float64(time.Since(start).Microseconds()) / 1000
	pt.Sets = p.Overrides(i)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(summary, &top); err != nil {
		return nil, pt, &jobError{Kind: "internal", Msg: "summary: " + err.Error()}
	}
	pt.Restored = scalar(top[sweep.ColumnRestored])
	pt.Recomputed = scalar(top[sweep.ColumnRecomputed])
	pt.TTFTP50 = scalar(top[sweep.ColumnTTFTP50])
	pt.TTFTP99 = scalar(top[sweep.ColumnTTFTP99])
	return summary, pt, nil
}

// scalar is a JSON scalar as written ("" for null or a missing key).
func scalar(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// collect gathers the points' summaries (in point order) into sweep.csv,
// sweep.json and the plotted curves: core/sweep's Collect, CSV, JSON and
// Series, so the files are the bytes `kvsim sweep` writes for the same
// grid.
func (s *sweepJob) collect(summaries [][]byte) (csv, js []byte, curves proto.SweepCurves, jerr *jobError) {
	defer func() {
		if r := recover(); r != nil {
			jerr = recovered(r)
		}
	}()
	p, jerr := s.plan()
	if jerr != nil {
		return nil, nil, curves, jerr
	}
	res, err := sweep.Collect(p, summaries)
	if err != nil {
		return nil, nil, curves, &jobError{Kind: "internal", Msg: err.Error()}
	}
	if x := p.XAxis(); x >= 0 {
		conv := func(column string) []proto.Curve {
			var out []proto.Curve
			for _, ser := range res.Series(x, column) {
				out = append(out, proto.Curve{Name: ser.Name, X: ser.X, Y: ser.Y})
			}
			return out
		}
		curves = proto.SweepCurves{Restored: conv(sweep.ColumnRestored), Recomputed: conv(sweep.ColumnRecomputed),
			TTFTP50: conv(sweep.ColumnTTFTP50), TTFTP99: conv(sweep.ColumnTTFTP99)}
	}
	return res.CSV(), res.JSON(), curves, nil
}
