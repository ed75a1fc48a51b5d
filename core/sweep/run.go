package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/kvsim/kvsim/core/replay"
)

// Options control how Run evaluates the points.
type Options struct {
	// Parallel is the number of points evaluated at once; 0 means
	// runtime.GOMAXPROCS(0).
	Parallel int
	// Progress, when set, is called after each point with the number of
	// points finished and the total. Calls never overlap.
	Progress func(done, total int)
	// Check runs the engine's invariant checker in every point (tests).
	Check bool
	// Limits bound each point's run (replay.Job.Limits).
	Limits replay.Limits
	// Workloads, when set, is shared by the points (a sharded sweep
	// estimated their costs with it); nil: each Run makes its own.
	Workloads *replay.Workloads
}

// Evaluate runs point i and returns its report summary (the object
// report.SummaryJSON encodes). It is what a browser Web Worker or the
// edge API calls for one point; Run calls it for every point. traces says
// where the config's trace paths are read from.
func (p *Plan) Evaluate(i int, traces replay.Traces, opts Options) ([]byte, error) {
	return p.evaluate(i, traces, opts, nil)
}

// Job is point i as a replay job.
func (p *Plan) Job(i int, traces replay.Traces, opts Options) replay.Job {
	return replay.Job{Name: p.Spec.Name, Dir: p.Spec.Dir, Config: p.Spec.Data, Sets: p.Overrides(i),
		Traces: traces, Limits: opts.Limits, Check: opts.Check}
}

func (p *Plan) evaluate(i int, traces replay.Traces, opts Options, wls *replay.Workloads) ([]byte, error) {
	if i < 0 || i >= p.n {
		return nil, fmt.Errorf("sweep: point %d out of range [0, %d)", i, p.n)
	}
	job := p.Job(i, traces, opts)
	job.Workloads = wls
	out, err := replay.Run(job)
	if err != nil {
		return nil, p.pointError(i, err)
	}
	return out.SummaryJSON(), nil
}

// pointError names the point in a replay error. A config error that comes
// from a varied value's override names the --vary argument rather than the
// --set it was turned into.
func (p *Plan) pointError(i int, err error) error {
	re, ok := errors.AsType[*replay.Error](err)
	if !ok {
		return &Error{Arg: p.Label(i), Msg: err.Error(), Err: err}
	}
	c := *re
	if strings.HasPrefix(c.File, "--set ") {
		for a, v := range p.Values(i) {
			for _, t := range p.Axes[a].Targets {
				if c.File == "--set "+t+"="+v {
					c.File = "--vary " + p.Axes[a].Path + "=" + v
				}
			}
		}
	}
	return &Error{Arg: p.Label(i), Msg: c.Error(), Err: &c}
}

// Run evaluates every point with opts.Parallel workers and collects the
// result. Points are handed out in order; the result does not depend on
// the number of workers. On failure it returns the error of the
// lowest-numbered failing point (every point before it has been run, so
// the error does not depend on the number of workers either) and starts
// no further points.
func (p *Plan) Run(traces replay.Traces, opts Options) (*Result, error) {
	all := make([]int, p.n)
	for i := range all {
		all[i] = i
	}
	out := p.each(all, traces, opts, true)
	summaries := make([][]byte, p.n)
	flats := make([]flat, p.n)
	for i, o := range out {
		if o.Err != nil {
			return nil, o.Err
		}
		summaries[i], flats[i] = o.Summary, o.flat
	}
	return collect(p, summaries, flats), nil
}

// An Outcome is one evaluated point: its summary, or why it failed.
type Outcome struct {
	Point   int
	Summary []byte
	Err     error
	flat    flat
}

// RunPoints evaluates the listed points (a shard of the grid) with
// opts.Parallel workers and returns one Outcome per point, in the order
// given. Unlike Run, a failing point does not stop the others.
func (p *Plan) RunPoints(points []int, traces replay.Traces, opts Options) []Outcome {
	return p.each(points, traces, opts, false)
}

// each evaluates points in order with opts.Parallel workers; with stop,
// a failure starts no further points.
func (p *Plan) each(points []int, traces replay.Traces, opts Options, stop bool) []Outcome {
	workers := opts.Parallel
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(points))
	wls := opts.Workloads
	if wls == nil {
		wls = replay.NewWorkloads()
	}
	out := make([]Outcome, len(points))
	var (
		mu     sync.Mutex
		next   int
		done   int
		failed bool
		wg     sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if failed && stop || next == len(points) {
					mu.Unlock()
					return
				}
				k := next
				next++
				mu.Unlock()

				i := points[k]
				s, err := p.evaluate(i, traces, opts, wls)
				var fl flat
				if err == nil {
					fl, err = p.flatten(i, s)
				}

				mu.Lock()
				out[k] = Outcome{Point: i, Summary: s, Err: err, flat: fl}
				if err != nil {
					failed = true
				}
				done++
				if opts.Progress != nil {
					opts.Progress(done, len(points))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}

// A Result is a finished sweep: one summary per point, in point order.
type Result struct {
	Plan *Plan
	// Summaries holds each point's report summary as encoded by
	// report.SummaryJSON.
	Summaries [][]byte
	// Rows holds each point's summary flattened to columns (see Columns).
	Rows []map[string]string
	// Columns lists the summary columns in report order: the keys of
	// report.SummaryJSON, nested values flattened as key.index.field
	// (g2_domains.0.capacity_blocks). A key that only some points have
	// (the G2 keys when one point has no host_offload) is still listed
	// once, at its place in the report order.
	Columns []string
}

// Collect builds the result from summaries evaluated elsewhere (one per
// point, in point order, each as returned by Evaluate).
func Collect(p *Plan, summaries [][]byte) (*Result, error) {
	if len(summaries) != p.n {
		return nil, fmt.Errorf("sweep: %d summaries for %d points", len(summaries), p.n)
	}
	flats := make([]flat, p.n)
	for i, s := range summaries {
		var err error
		if flats[i], err = p.flatten(i, s); err != nil {
			return nil, err
		}
	}
	return collect(p, summaries, flats), nil
}

// flat is one summary flattened: its leaf keys in order and their values.
type flat struct {
	keys []string
	row  map[string]string
}

func (p *Plan) flatten(i int, summary []byte) (flat, error) {
	keys, row, err := flatten(summary)
	if err != nil {
		return flat{}, fmt.Errorf("sweep: %s: summary: %v", p.Label(i), err)
	}
	return flat{keys, row}, nil
}

func collect(p *Plan, summaries [][]byte, flats []flat) *Result {
	r := &Result{Plan: p, Summaries: summaries, Rows: make([]map[string]string, p.n)}
	for i, f := range flats {
		r.Rows[i] = f.row
		r.Columns = mergeKeys(r.Columns, f.keys)
	}
	return r
}

// mergeKeys adds keys to cols, each new key placed right after the key
// that precedes it in keys, so that lists that are each in report order
// merge into one list in report order.
func mergeKeys(cols, keys []string) []string {
	pos := map[string]int{}
	for i, c := range cols {
		pos[c] = i
	}
	at := -1
	for _, k := range keys {
		if i, ok := pos[k]; ok {
			at = i
			continue
		}
		at++
		cols = append(cols, "")
		copy(cols[at+1:], cols[at:])
		cols[at] = k
		for j := at; j < len(cols); j++ {
			pos[cols[j]] = j
		}
	}
	return cols
}

// flatten reads one JSON object, keeping its key order and the numbers'
// text, and flattens nested objects and arrays to dotted keys
// (g2_domains.0.capacity_blocks). It returns the leaf keys in order and
// their values as text (strings unquoted, null as "").
func flatten(b []byte) ([]string, map[string]string, error) {
	f := flattener{b: b, row: map[string]string{}}
	f.space()
	if f.i >= len(b) || b[f.i] != '{' {
		return nil, nil, fmt.Errorf("not a JSON object")
	}
	if err := f.value(""); err != nil {
		return nil, nil, err
	}
	if f.space(); f.i != len(b) {
		return nil, nil, fmt.Errorf("offset %d: text after the object", f.i)
	}
	return f.keys, f.row, nil
}

type flattener struct {
	b    []byte
	i    int
	keys []string
	row  map[string]string
}

func (f *flattener) space() {
	for f.i < len(f.b) && (f.b[f.i] == ' ' || f.b[f.i] == '\t' || f.b[f.i] == '\n' || f.b[f.i] == '\r') {
		f.i++
	}
}

func (f *flattener) errorf(format string, a ...any) error {
	return fmt.Errorf("offset %d: %s", f.i, fmt.Sprintf(format, a...))
}

// expect consumes c after optional space.
func (f *flattener) expect(c byte) error {
	f.space()
	if f.i >= len(f.b) || f.b[f.i] != c {
		return f.errorf("expected %q", c)
	}
	f.i++
	return nil
}

func (f *flattener) leaf(key, v string) {
	f.keys = append(f.keys, key)
	f.row[key] = v
}

func (f *flattener) value(key string) error {
	f.space()
	if f.i >= len(f.b) {
		return f.errorf("unexpected end")
	}
	join := func(k string) string {
		if key == "" {
			return k
		}
		return key + "." + k
	}
	switch c := f.b[f.i]; {
	case c == '{' || c == '[':
		f.i++
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		for n := 0; ; n++ {
			f.space()
			if f.i < len(f.b) && f.b[f.i] == end {
				f.i++
				return nil
			}
			if n > 0 {
				if err := f.expect(','); err != nil {
					return err
				}
				f.space()
			}
			child := strconv.Itoa(n)
			if c == '{' {
				k, err := f.str()
				if err != nil {
					return err
				}
				if err := f.expect(':'); err != nil {
					return err
				}
				child = k
			}
			if err := f.value(join(child)); err != nil {
				return err
			}
		}
	case c == '"':
		s, err := f.str()
		if err != nil {
			return err
		}
		f.leaf(key, s)
	default:
		j := f.i
		for j < len(f.b) && !strings.ContainsRune(",]} \t\r\n", rune(f.b[j])) {
			j++
		}
		tok := string(f.b[f.i:j])
		switch {
		case tok == "null":
			f.leaf(key, "")
		case tok == "true" || tok == "false":
			f.leaf(key, tok)
		case json.Valid(f.b[f.i:j]) && tok != "":
			f.leaf(key, tok) // a number, as written
		default:
			return f.errorf("invalid value %q", tok)
		}
		f.i = j
	}
	return nil
}

// str reads a JSON string at f.i.
func (f *flattener) str() (string, error) {
	if f.i >= len(f.b) || f.b[f.i] != '"' {
		return "", f.errorf("expected a string")
	}
	j := f.i + 1
	plain := true
	for ; j < len(f.b) && f.b[j] != '"'; j++ {
		if f.b[j] == '\\' {
			plain = false
			j++
		}
	}
	if j >= len(f.b) {
		return "", f.errorf("unterminated string")
	}
	raw := f.b[f.i : j+1]
	f.i = j + 1
	if plain {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}
