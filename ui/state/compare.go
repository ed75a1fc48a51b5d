package state

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/wasm/proto"
)

// Compare axes.
const (
	AxisConnector = "connector"
	AxisG2        = "g2"
	AxisRouting   = "routing"
)

// Compare runs the same config and trace two or three times, varying one
// thing: the connector profile, the G2 size ("none" for no tier) or the
// routing policy.
type Compare struct {
	Axis   string
	Values []string
}

// String is the link form: "connector:a,b,c" or "g2:192,2048,none".
func (c Compare) String() string { return c.Axis + ":" + strings.Join(c.Values, ",") }

// ParseCompare reads the link form and checks it.
func ParseCompare(s string) (Compare, error) {
	axis, vals, ok := strings.Cut(s, ":")
	if !ok {
		return Compare{}, fmt.Errorf("compare %q: want AXIS:V1,V2[,V3]", s)
	}
	c := Compare{Axis: axis}
	for _, v := range strings.Split(vals, ",") {
		if v = strings.TrimSpace(v); v != "" {
			c.Values = append(c.Values, v)
		}
	}
	return c, c.Check()
}

// Check explains what is wrong with c, or returns nil.
func (c Compare) Check() error {
	if len(c.Values) < 2 || len(c.Values) > 3 {
		return fmt.Errorf("compare two or three runs (got %d)", len(c.Values))
	}
	seen := map[string]bool{}
	for _, v := range c.Values {
		switch c.Axis {
		case AxisConnector:
			ok := false
			for _, k := range Connectors {
				ok = ok || k == v
			}
			if !ok {
				return fmt.Errorf("unknown connector %q", v)
			}
		case AxisRouting:
			if !slices.Contains(RoutingPolicies, v) {
				return fmt.Errorf("unknown routing policy %q", v)
			}
		case AxisG2:
			if v != "none" {
				if n, err := strconv.Atoi(v); err != nil || n <= 0 {
					return fmt.Errorf("G2 size %q: enter a positive whole number of blocks or none", v)
				}
			}
		default:
			return fmt.Errorf("unknown compare axis %q (want connector, g2 or routing)", c.Axis)
		}
		if seen[v] {
			return fmt.Errorf("%q is listed twice", v)
		}
		seen[v] = true
	}
	return nil
}

// Label is the row label of value v.
func (c Compare) Label(v string) string {
	if c.Axis == AxisConnector {
		return ConnectorLabel(v)
	}
	if c.Axis == AxisRouting {
		return RoutingLabel(v)
	}
	if v == "none" {
		return "no G2"
	}
	return "G2 " + v + " blocks"
}

// rowLabel is the row label of value v on cfg: every setting that differs
// between the rows and what the rows share that a reader needs (the
// connector of a G2-size compare, P/D).
func (c Compare) rowLabel(cfg *config.Config, v string) string {
	l := c.Label(v)
	if cfg == nil {
		return l
	}
	f := FormOf(cfg)
	if c.Axis == AxisG2 && v != "none" {
		conn := f.Connector
		if !f.HasG2 {
			conn = config.ConnectorOffloadingV024 // the config's default connector
		}
		l = ConnectorLabel(conn) + ", " + l
	}
	if f.PD() {
		l = "P/D, " + l
	}
	return l
}

// PDProblem says why c cannot run on a P/D config ("" when it can): the
// v0.32 connector profiles require the aggregated role, so a connector
// compare has one profile left.
func (c Compare) PDProblem(pd bool) string {
	if !pd || c.Axis != AxisConnector {
		return ""
	}
	return "Comparing connectors is not available with P/D: offloading v0.32 and SimpleCPU v0.32 require the aggregated role. Compare G2 sizes, or turn P/D off."
}

// Variants are the runs of c on the config cfg parses to: --set overrides
// on every role.
func (c Compare) Variants(cfg *config.Config) []proto.Variant {
	roles := RolePaths(cfg)
	out := make([]proto.Variant, 0, len(c.Values))
	for _, v := range c.Values {
		if c.Axis == AxisRouting {
			out = append(out, proto.Variant{Label: c.Label(v), Sets: []string{"engine.routing=" + v}})
			continue
		}
		var sets []string
		for _, r := range roles {
			switch {
			case c.Axis == AxisConnector:
				sets = append(sets, r+".kv_cache.host_offload.connector="+v)
			case v == "none":
				sets = append(sets, r+".kv_cache.host_offload=null")
			default:
				sets = append(sets, r+".kv_cache.host_offload.num_host_blocks="+v)
			}
		}
		out = append(out, proto.Variant{Label: c.rowLabel(cfg, v), Sets: sets})
	}
	return out
}

// DefaultRoutingCompare is the routing axis's starting set: round robin
// against the KV router.
func DefaultRoutingCompare() Compare {
	return Compare{Axis: AxisRouting, Values: []string{config.RoutingRoundRobin, config.RoutingKVRouter}}
}

// DefaultCompare is what the Compare toggle starts with.
func DefaultCompare() Compare {
	return Compare{Axis: AxisConnector, Values: append([]string(nil), Connectors...)}
}
