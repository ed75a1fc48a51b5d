package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/kvsim/kvsim/core/vtime"
)

// maxAliasChain bounds how many anchors and aliases resolve follows to
// reach a value.
const maxAliasChain = 32

// A decoder walks the YAML AST of one document against the schema. It
// records, for every field path it has seen, the node that holds it, so
// that checks made after decoding can still point at the right line.
type decoder struct {
	name         string
	aliases      map[*ast.AliasNode]ast.Node  // alias → the anchored value
	origin       map[ast.Node]string          // node → "--set PATH=VALUE" that made it
	nodes        map[string]ast.Node          // field path → node (value, or mapping)
	merged       map[*ast.MappingNode][]entry // entries with merges expanded; nil while expanding
	agenticTrace bool                         // the traffic is an agentic trace (decoded first)
}

// failNode stops decoding with an error positioned at n.
func (d *decoder) failNode(n ast.Node, path, format string, args ...any) {
	e := &Error{File: d.name, Path: path, Msg: fmt.Sprintf(format, args...)}
	if set, ok := d.origin[n]; ok {
		e.File = set
	} else if n != nil {
		e.Line, e.Col = position(n)
	}
	panic(bailout{e})
}

// fail stops decoding with an error about path, positioned at the node of
// path or, when the key was not written, at its nearest written ancestor.
func (d *decoder) fail(path, format string, args ...any) {
	d.failNode(d.nodeFor(path), path, format, args...)
}

func (d *decoder) nodeFor(path string) ast.Node {
	for p := path; ; {
		if n, ok := d.nodes[p]; ok {
			return n
		}
		if p == "" {
			return nil
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			p = ""
		} else {
			p = p[:i]
		}
	}
}

// position returns the 1-based line and column where n starts. A block
// mapping's own token is the first colon, so its first key is used.
func position(n ast.Node) (line, col int) {
	switch v := n.(type) {
	case nil:
		return 0, 0
	case *ast.MappingNode:
		if !v.IsFlowStyle && len(v.Values) > 0 && v.Values[0].Key != nil {
			return position(v.Values[0].Key)
		}
		return tokenPosition(v.Start)
	case *ast.SequenceNode:
		return tokenPosition(v.Start)
	case *ast.LiteralNode:
		return tokenPosition(v.Start)
	}
	return tokenPosition(n.GetToken())
}

func tokenPosition(tk *token.Token) (line, col int) {
	if tk == nil || tk.Position == nil {
		return 0, 0
	}
	return tk.Position.Line, tk.Position.Column
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// resolve strips anchors and follows aliases, so callers see the value
// itself. YAML tags are rejected: no config value needs one and honouring
// only some of them would be surprising.
func (d *decoder) resolve(n ast.Node, path string) ast.Node {
	for range maxAliasChain {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			target, ok := d.aliases[v]
			if !ok {
				d.failNode(v, path, "unknown alias *%s", aliasName(v))
			}
			n = target
		case *ast.TagNode:
			tag := "a tag"
			if v.Start != nil {
				tag = v.Start.Value
			}
			d.failNode(v, path, "YAML tags are not supported (got %s)", tag)
		default:
			return n
		}
	}
	d.failNode(n, path, "too many nested aliases")
	return nil
}

func anchorName(a *ast.AnchorNode) string {
	if a.Name == nil || a.Name.GetToken() == nil {
		return ""
	}
	return a.Name.GetToken().Value
}

func aliasName(a *ast.AliasNode) string {
	if a.Value == nil || a.Value.GetToken() == nil {
		return ""
	}
	return a.Value.GetToken().Value
}

// collectAliases binds every alias in n to the value of the latest anchor
// of that name defined before it in document order, as YAML specifies.
// Aliases that precede their anchor stay unbound and fail in resolve.
func collectAliases(n ast.Node, anchors map[string]ast.Node, aliases map[*ast.AliasNode]ast.Node) {
	switch v := n.(type) {
	case *ast.AnchorNode:
		anchors[anchorName(v)] = v.Value
		collectAliases(v.Value, anchors, aliases)
	case *ast.AliasNode:
		if target, ok := anchors[aliasName(v)]; ok {
			aliases[v] = target
		}
	case *ast.TagNode:
		collectAliases(v.Value, anchors, aliases)
	case *ast.MappingNode:
		for _, mv := range v.Values {
			collectAliases(mv.Key, anchors, aliases)
			collectAliases(mv.Value, anchors, aliases)
		}
	case *ast.MappingKeyNode:
		collectAliases(v.Value, anchors, aliases)
	case *ast.SequenceNode:
		for _, e := range v.Values {
			collectAliases(e, anchors, aliases)
		}
	}
}

// describe names a value for "expected X, got Y" messages.
func describe(n ast.Node) string {
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return "null"
	case *ast.StringNode:
		if v.Token != nil && v.Token.Type == token.StringType && isDigits(strings.TrimPrefix(v.Value, "-")) {
			// goccy leaves integers beyond 64 bits as plain strings.
			return "integer " + v.Value + " (out of range)"
		}
		return "string " + strconv.Quote(v.Value)
	case *ast.LiteralNode:
		return "string " + strconv.Quote(v.Value.Value)
	case *ast.IntegerNode:
		return "integer " + v.Token.Value
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "float " + n.GetToken().Value
	case *ast.BoolNode:
		return "boolean " + v.Token.Value
	case *ast.MappingNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	}
	return n.Type().String()
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// isNull reports whether n is absent or an explicit null.
func isNull(n ast.Node) bool {
	_, null := n.(*ast.NullNode)
	return n == nil || null
}

// A mapping is one decoded YAML mapping: merge keys expanded, duplicate
// and unknown keys rejected, aliases resolved. An absent or null mapping
// decodes as an empty one, so every field takes its default.
type mapping struct {
	d    *decoder
	path string
	node ast.Node // nil when the mapping was not written
	keys []string // in document order (merged keys after explicit ones)
	key  map[string]ast.Node
	val  map[string]ast.Node // resolved; nil for an explicit null
}

type entry struct {
	key   ast.MapKeyNode
	name  string
	value ast.Node
}

// mapping decodes n (already resolved) at path, allowing only the given
// keys. The allowed keys, in schema order, are listed in the error for an
// unknown key.
func (d *decoder) mapping(n ast.Node, path string, allowed ...string) *mapping {
	m := &mapping{d: d, path: path, key: map[string]ast.Node{}, val: map[string]ast.Node{}}
	if isNull(n) {
		return m
	}
	mn, ok := n.(*ast.MappingNode)
	if !ok {
		d.failNode(n, path, "expected a mapping, got %s", describe(n))
	}
	m.node = n
	d.nodes[path] = n
	for _, e := range d.entries(mn, path) {
		if !slices.Contains(allowed, e.name) {
			if len(allowed) == 0 {
				d.failNode(e.key, join(path, e.name), "unknown key %q (this mapping takes no keys)", e.name)
			}
			d.failNode(e.key, join(path, e.name), "unknown key %q (allowed: %s)", e.name, strings.Join(allowed, ", "))
		}
		p := join(path, e.name)
		v := d.resolve(e.value, p)
		m.keys = append(m.keys, e.name)
		m.key[e.name] = e.key
		if isNull(v) {
			m.val[e.name] = nil
			d.nodes[p] = e.key
		} else {
			m.val[e.name] = v
			d.nodes[p] = v
		}
	}
	return m
}

// entries lists the key/value pairs of mn with merge keys ("<<") expanded:
// explicit keys win over merged ones, and an earlier merge source wins
// over a later one, as in YAML's merge-key convention. Results are cached
// per mapping, which keeps nested merges linear (a chain of mappings that
// each merge the previous one several times would otherwise expand
// exponentially) and lets a mapping that merges itself be detected.
func (d *decoder) entries(mn *ast.MappingNode, path string) []entry {
	if es, ok := d.merged[mn]; ok {
		if es == nil {
			d.failNode(mn, path, "a merge key (<<) includes the mapping it is in")
		}
		return es
	}
	d.merged[mn] = nil // in progress
	es := []entry{}
	seen := map[string]ast.Node{}
	var merges []*ast.MappingValueNode
	for _, mv := range mn.Values {
		if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
			merges = append(merges, mv)
			continue
		}
		name := keyName(mv.Key)
		if first, dup := seen[name]; dup {
			line, col := position(first)
			d.failNode(mv.Key, join(path, name), "duplicate key %q (first at %d:%d)", name, line, col)
		}
		seen[name] = mv.Key
		es = append(es, entry{mv.Key, name, mv.Value})
	}
	for _, mv := range merges {
		var sources []ast.Node
		switch v := d.resolve(mv.Value, path).(type) {
		case *ast.SequenceNode:
			for _, s := range v.Values {
				sources = append(sources, d.resolve(s, path))
			}
		default:
			sources = []ast.Node{v}
		}
		for _, s := range sources {
			sm, ok := s.(*ast.MappingNode)
			if !ok {
				d.failNode(mv.Key, path, "a merge key (<<) needs a mapping or a list of mappings, got %s", describe(s))
			}
			for _, e := range d.entries(sm, path) {
				if _, ok := seen[e.name]; !ok {
					seen[e.name] = e.key
					es = append(es, e)
				}
			}
		}
	}
	d.merged[mn] = es
	return es
}

// peek returns the node and string value of key in the mapping n (""
// when n is not a mapping or key is not a string), without checking the
// other keys.
func (d *decoder) peek(n ast.Node, path, key string) (ast.Node, string) {
	mn, ok := n.(*ast.MappingNode)
	if !ok {
		return nil, ""
	}
	for _, e := range d.entries(mn, path) {
		if e.name == key {
			v := d.resolve(e.value, join(path, key))
			if s, ok := v.(*ast.StringNode); ok {
				return v, s.Value
			}
		}
	}
	return nil, ""
}

// keyName is the text of a mapping key; non-string keys (numbers, null)
// use their literal text and then fail as unknown keys.
func keyName(k ast.Node) string {
	switch v := k.(type) {
	case *ast.StringNode:
		return v.Value
	case nil:
		return ""
	}
	if tk := k.GetToken(); tk != nil {
		return tk.Value
	}
	return k.String()
}

// has reports whether key was written with a non-null value.
func (m *mapping) has(key string) bool { return m.val[key] != nil }

// written reports whether key was written at all, null included.
func (m *mapping) written(key string) bool {
	_, ok := m.key[key]
	return ok
}

func (m *mapping) get(key string) (ast.Node, bool) {
	v := m.val[key]
	return v, v != nil
}

func (m *mapping) field(key string) string { return join(m.path, key) }

// fail reports a problem with key (or, if it was not written, at the
// mapping itself).
func (m *mapping) fail(key, format string, args ...any) {
	m.d.fail(m.field(key), format, args...)
}

// require fails unless key has a value.
func (m *mapping) require(key string) ast.Node {
	v, ok := m.get(key)
	if !ok {
		m.fail(key, "missing required key")
	}
	return v
}

// sub decodes the mapping under key (empty when absent).
func (m *mapping) sub(key string, allowed ...string) *mapping {
	v, _ := m.get(key)
	return m.d.mapping(v, m.field(key), allowed...)
}

// intRule is the accepted range of an integer field.
type intRule struct {
	min  int64
	desc string
}

var (
	positiveInt = intRule{1, "a positive integer"}
	nonNegInt   = intRule{0, "an integer ≥ 0"}
	atLeastTwo  = intRule{2, "an integer ≥ 2"}
)

// int64Of reads an integer field. Floats are rejected even when integral:
// a count written as 2.0 is more likely a mistake than a count.
func (m *mapping) int64Of(key string, def int64, r intRule) int64 {
	v, ok := m.get(key)
	if !ok {
		return def
	}
	return m.d.intValue(v, m.field(key), r)
}

func (d *decoder) intValue(v ast.Node, path string, r intRule) int64 {
	n, ok := v.(*ast.IntegerNode)
	if !ok {
		d.failNode(v, path, "expected %s, got %s", r.desc, describe(v))
	}
	i, ok := integer(n)
	if !ok || i < r.min {
		d.failNode(v, path, "expected %s, got %s", r.desc, n.Token.Value)
	}
	return i
}

// integer returns the value of n; ok is false when it does not fit an
// int64. (goccy stores non-negative integers as uint64.)
func integer(n *ast.IntegerNode) (i int64, ok bool) {
	switch v := n.Value.(type) {
	case int64:
		return v, true
	case uint64:
		return int64(v), v <= math.MaxInt64
	}
	return 0, false
}

func (m *mapping) int(key string, def int, r intRule) int {
	i := m.int64Of(key, int64(def), r)
	if int64(int(i)) != i {
		m.fail(key, "expected %s, got %d (too large)", r.desc, i)
	}
	return int(i)
}

// uint64Of reads an unsigned 64-bit integer (agentic snapshot seeds).
func (m *mapping) uint64Of(key string, def uint64) uint64 {
	v, ok := m.get(key)
	if !ok {
		return def
	}
	const desc = "an integer from 0 to 2^64-1"
	n, ok := v.(*ast.IntegerNode)
	if !ok {
		m.d.failNode(v, m.field(key), "expected %s, got %s", desc, describe(v))
	}
	switch x := n.Value.(type) {
	case uint64:
		return x
	case int64:
		if x >= 0 {
			return uint64(x)
		}
	}
	m.d.failNode(v, m.field(key), "expected %s, got %s", desc, n.Token.Value)
	return 0
}

// floatRule is the accepted range of a number field. Every number must be
// finite.
type floatRule struct {
	desc string
	ok   func(float64) bool
}

var (
	positiveNum = floatRule{"a positive number", func(x float64) bool { return x > 0 }}
	nonNegNum   = floatRule{"a number ≥ 0", func(x float64) bool { return x >= 0 }}
	ratioNum    = floatRule{"a number from 0 to 1", func(x float64) bool { return x >= 0 && x <= 1 }}
)

// float reads a number field; YAML integers are accepted.
func (m *mapping) float(key string, def float64, r floatRule) float64 {
	v, ok := m.get(key)
	if !ok {
		return def
	}
	var x float64
	switch n := v.(type) {
	case *ast.IntegerNode:
		switch i := n.Value.(type) {
		case int64:
			x = float64(i)
		case uint64:
			x = float64(i)
		}
	case *ast.FloatNode:
		x = n.Value
	default:
		m.d.failNode(v, m.field(key), "expected %s, got %s", r.desc, describe(v))
	}
	if math.IsInf(x, 0) || math.IsNaN(x) || !r.ok(x) {
		m.d.failNode(v, m.field(key), "expected %s, got %s", r.desc, v.GetToken().Value)
	}
	return x
}

// ms reads a number field of virtual milliseconds (float's rules).
func (m *mapping) ms(key string, def vtime.Time, r floatRule) vtime.Time {
	return vtime.Time(m.float(key, float64(def), r))
}

func (m *mapping) boolean(key string, def bool) bool {
	v, ok := m.get(key)
	if !ok {
		return def
	}
	b, ok := v.(*ast.BoolNode)
	if !ok {
		m.d.failNode(v, m.field(key), "expected a boolean (true or false), got %s", describe(v))
	}
	return b.Value
}

// str reads a string field. Only YAML strings are accepted: a number
// where text is expected (backend_version: 0.24) is rejected rather than
// reformatted.
func (m *mapping) str(key, def string) string {
	v, ok := m.get(key)
	if !ok {
		return def
	}
	return m.d.stringValue(v, m.field(key), "a string")
}

func (d *decoder) stringValue(v ast.Node, path, desc string) string {
	switch n := v.(type) {
	case *ast.StringNode:
		return n.Value
	case *ast.LiteralNode:
		return n.Value.Value
	}
	d.failNode(v, path, "expected %s, got %s", desc, describe(v))
	return ""
}

// enum reads a string field that takes one of a fixed set of values.
func (m *mapping) enum(key, def string, values ...string) string {
	s := m.str(key, def)
	if !slices.Contains(values, s) {
		m.fail(key, "expected one of %s, got %q", strings.Join(values, ", "), s)
	}
	return s
}

// only fails on the first key (in document order) that has a value but
// is not in keys, with why(key) as the message.
func (m *mapping) only(keys []string, why func(key string) string) {
	for _, k := range m.keys {
		if m.has(k) && !slices.Contains(keys, k) {
			m.fail(k, "%s", why(k))
		}
	}
}
