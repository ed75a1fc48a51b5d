// Package sweep runs a grid of replays: one config, a few --set overrides
// and one or more --vary axes whose cartesian product gives the points.
// Every point is an independent, deterministic replay.Run, so the points
// may be evaluated in any order, in parallel, or elsewhere (a Web Worker,
// the edge API) and gathered with Collect; the encoded result depends only
// on the plan and the summaries, never on who evaluated what when.
//
// The package does no file or network I/O: the caller hands it the config
// bytes and a replay.Opener for traces, and writes the encodings itself.
// docs/sweep.md describes the path rules and the output columns.
package sweep

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kvsim/kvsim/core/config"
)

// DefaultConfig names the built-in example (in package traces) that a
// sweep uses when no config is given, and DefaultVary is its grid: the
// connector comparison of
// docs/model/cases.md ("Case A: connector comparison") over eight G2
// sizes.
const DefaultConfig = "connectors.yaml"

// DefaultVary is the default sweep's --vary arguments.
var DefaultVary = []string{
	"host_offload.num_host_blocks=64,128,192,256,384,512,1024,2048",
	"connector=" + strings.Join(config.Connectors, ","),
}

// A Spec is what a sweep is asked to do.
type Spec struct {
	// Name is the config's name in errors (a file path, or DefaultConfig);
	// Dir is stored in each point's config.Config.Dir.
	Name, Dir string
	Data      []byte
	// Sets are --set overrides applied to every point before the varied
	// values.
	Sets []string
	// Vary holds the --vary arguments ("PATH=v1,v2,…"); the first varies
	// slowest.
	Vary []string
}

// An Axis is one validated --vary.
type Axis struct {
	Vary
	// Targets are the full dotted paths the value is set at (several when
	// a shorthand names a key of several roles).
	Targets []string
}

// Numeric tells whether every value is a number (such an axis can be a
// plot's x axis).
func (a *Axis) Numeric() bool {
	for _, v := range a.Values {
		if _, ok := number(v); !ok {
			return false
		}
	}
	return true
}

// A Plan is a validated sweep: its axes and its points in order.
type Plan struct {
	Spec Spec
	Axes []Axis
	// n is the number of points: the product of the axes' lengths.
	n int
}

// Len is the number of points.
func (p *Plan) Len() int { return p.n }

// Point returns point i's value index on each axis. The first axis varies
// slowest and the last fastest.
func (p *Plan) Point(i int) []int {
	idx := make([]int, len(p.Axes))
	for a := len(p.Axes) - 1; a >= 0; a-- {
		k := len(p.Axes[a].Values)
		idx[a] = i % k
		i /= k
	}
	return idx
}

// Values returns point i's value on each axis, as written.
func (p *Plan) Values(i int) []string {
	idx := p.Point(i)
	out := make([]string, len(idx))
	for a, k := range idx {
		out[a] = p.Axes[a].Values[k]
	}
	return out
}

// Label names point i for messages: "point 3 (connector=offloading_v0_32, …)".
func (p *Plan) Label(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "point %d (", i)
	for a, v := range p.Values(i) {
		if a > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Axes[a].Path + "=" + v)
	}
	b.WriteByte(')')
	return b.String()
}

// Overrides returns point i's --set overrides: the spec's, then each
// axis's value at each of its targets.
func (p *Plan) Overrides(i int) []string {
	out := append([]string(nil), p.Spec.Sets...)
	for a, v := range p.Values(i) {
		for _, t := range p.Axes[a].Targets {
			out = append(out, t+"="+v)
		}
	}
	return out
}

// Config parses point i's config.
func (p *Plan) Config(i int) (*config.Config, error) {
	cfg, err := config.Parse(p.Spec.Name, p.Spec.Dir, p.Spec.Data, p.Overrides(i))
	if err != nil {
		return nil, &Error{Arg: p.Label(i), Msg: p.relabel(err, p.Values(i)).Error()}
	}
	return cfg, nil
}

// relabel makes a config error that comes from a varied value's override
// name the --vary argument rather than the --set it was turned into.
func (p *Plan) relabel(err error, values []string) error {
	var ce *config.Error
	if !errors.As(err, &ce) || !strings.HasPrefix(ce.File, "--set ") {
		return err
	}
	for a, v := range values {
		for _, t := range p.Axes[a].Targets {
			if ce.File == "--set "+t+"="+v {
				c := *ce
				c.File = "--vary " + p.Axes[a].Path + "=" + v
				return &c
			}
		}
	}
	return err
}

// MaxPoints bounds a plan's size, so a typo cannot ask for a billion runs.
const MaxPoints = 1 << 20

// NewPlan validates spec and expands its grid. It checks, in order: the
// config with its --set overrides, each --vary's syntax, path and
// duplicates, each value on its own (so an unknown path or a value of the
// wrong type is reported against its --vary), then every point's whole
// config, so that nothing runs unless every point is valid.
func NewPlan(spec Spec) (*Plan, error) {
	if len(spec.Vary) == 0 {
		return nil, &Error{Arg: "--vary", Msg: "give at least one --vary PATH=VALUE,VALUE,…"}
	}
	base, err := config.Parse(spec.Name, spec.Dir, spec.Data, spec.Sets)
	if err != nil {
		return nil, err
	}
	p := &Plan{Spec: spec, n: 1}
	for _, arg := range spec.Vary {
		v, err := ParseVary(arg)
		if err != nil {
			return nil, err
		}
		fail := func(format string, a ...any) (*Plan, error) {
			return nil, &Error{Arg: "--vary " + arg, Msg: fmt.Sprintf(format, a...)}
		}
		targets, msg := resolve(v.Path, base)
		if msg != "" {
			return fail("%s", msg)
		}
		for _, prev := range p.Axes {
			for _, t := range targets {
				for _, pt := range prev.Targets {
					if t == pt {
						return fail("%s is already varied by --vary %s", t, prev.Path)
					}
					if overlaps(t, pt) {
						return fail("%s overlaps %s, varied by --vary %s", t, pt, prev.Path)
					}
				}
			}
		}
		ax := Axis{Vary: v, Targets: targets}
		if err := checkValues(spec, &ax, arg); err != nil {
			return nil, err
		}
		p.Axes = append(p.Axes, ax)
		if p.n > MaxPoints/len(v.Values) {
			return fail("the grid has more than %d points", MaxPoints)
		}
		p.n *= len(v.Values)
	}
	for i := 0; i < p.n; i++ {
		if _, err := p.Config(i); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkValues parses the base config with each of ax's values alone. An
// error that every value gives is about the path (an unknown key, a key
// that the config rejects in this mode) and is reported once without a
// value; otherwise the first failing value is named.
func checkValues(spec Spec, ax *Axis, arg string) error {
	msgs := make([]string, len(ax.Values)) // "" for a value that passes
	first := -1
	for i, v := range ax.Values {
		sets := append([]string(nil), spec.Sets...)
		for _, t := range ax.Targets {
			sets = append(sets, t+"="+v)
		}
		if _, err := config.Parse(spec.Name, spec.Dir, spec.Data, sets); err != nil {
			msgs[i] = describe(err, ax, v)
			if first < 0 {
				first = i
			}
		}
	}
	if first < 0 {
		return nil
	}
	if !slices.ContainsFunc(msgs, func(m string) bool { return m != msgs[0] }) {
		return &Error{Arg: "--vary " + arg, Msg: msgs[0]}
	}
	return &Error{Arg: "--vary " + arg, Msg: fmt.Sprintf("value %q: %s", ax.Values[first], msgs[first])}
}

// describe renders a config error met while trying value v of ax: the
// field path and message when the error is in the value's own override,
// otherwise the whole error with its file position.
func describe(err error, ax *Axis, v string) string {
	var ce *config.Error
	if errors.As(err, &ce) {
		for _, t := range ax.Targets {
			if ce.File == "--set "+t+"="+v {
				if ce.Path == "" {
					return ce.Msg
				}
				return ce.Path + ": " + ce.Msg
			}
		}
	}
	return err.Error()
}
