package config

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// override applies one "--set PATH=VALUE" to the document and returns the
// new root. Nodes of the document are never modified: each mapping on the
// path is copied (with its merge keys expanded), so a change made through
// an alias affects only the path named and not the anchor's other users.
// Nodes that the override creates are remembered in d.origin so that their
// errors are positioned at the --set argument.
func (d *decoder) override(root ast.Node, set string) ast.Node {
	label := "--set " + set
	eq := strings.IndexByte(set, '=')
	if eq < 0 {
		panic(bailout{&Error{File: label, Msg: "expected PATH=VALUE"}})
	}
	path, text := set[:eq], set[eq+1:]
	keys, msg := splitPath(path)
	if msg != "" {
		panic(bailout{&Error{File: label, Msg: msg}})
	}
	value := d.overrideValue(label, path, text)
	return d.setPath(root, keys, "", path, value, label)
}

// splitPath splits a dotted path into keys, or explains why it cannot.
func splitPath(path string) (keys []string, msg string) {
	if path == "" {
		return nil, "expected PATH=VALUE with a nonempty PATH"
	}
	keys = strings.Split(path, ".")
	for _, k := range keys {
		if k == "" {
			return nil, fmt.Sprintf("invalid path %q: empty key", path)
		}
		for _, r := range k {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				return nil, fmt.Sprintf("invalid path %q: %q is not allowed in a key (use letters, digits, _ and -)", path, r)
			}
		}
	}
	return keys, ""
}

// overrideValue parses VALUE as one YAML scalar or flow collection. It
// returns nil for null, which removes the key.
func (d *decoder) overrideValue(label, path, text string) ast.Node {
	fail := func(format string, args ...any) {
		panic(bailout{&Error{File: label, Path: path, Msg: fmt.Sprintf(format, args...)}})
	}
	f, err := parseYAML([]byte(text))
	if err != nil {
		fail("invalid VALUE: %s", yamlMessage(err))
	}
	if len(f.Docs) != 1 || f.Docs[0].Body == nil {
		fail("expected one YAML value after '=' (use null to remove the key)")
	}
	v := f.Docs[0].Body
	if msg := flowOnly(v); msg != "" {
		fail("%s", msg)
	}
	if isNull(v) {
		return nil
	}
	markOrigin(v, label, d.origin)
	return v
}

// flowOnly explains why v is not a scalar or flow value, or returns "".
// Block collections would need several lines, and anchors, aliases and
// tags would refer outside the value.
func flowOnly(v ast.Node) string {
	switch n := v.(type) {
	case *ast.MappingNode:
		if !n.IsFlowStyle {
			return "VALUE must be a scalar or a flow value: write a mapping as {key: value}"
		}
		for _, mv := range n.Values {
			if msg := flowOnly(mv.Key); msg != "" {
				return msg
			}
			if msg := flowOnly(mv.Value); msg != "" {
				return msg
			}
		}
	case *ast.SequenceNode:
		if !n.IsFlowStyle {
			return "VALUE must be a scalar or a flow value: write a list as [a, b]"
		}
		for _, e := range n.Values {
			if msg := flowOnly(e); msg != "" {
				return msg
			}
		}
	case *ast.LiteralNode:
		return "VALUE must be a scalar or a flow value, not a block scalar"
	case *ast.AnchorNode, *ast.AliasNode, *ast.TagNode, *ast.MergeKeyNode, *ast.MappingKeyNode:
		return "anchors, aliases, tags and merge keys are not allowed in a --set VALUE"
	}
	return ""
}

func markOrigin(v ast.Node, label string, origin map[ast.Node]string) {
	origin[v] = label
	switch n := v.(type) {
	case *ast.MappingNode:
		for _, mv := range n.Values {
			markOrigin(mv.Key, label, origin)
			markOrigin(mv.Value, label, origin)
		}
	case *ast.SequenceNode:
		for _, e := range n.Values {
			markOrigin(e, label, origin)
		}
	}
}

// setPath returns a copy of node with keys set to value (removed when
// value is nil). prefix is the dotted path of node, full the whole path.
func (d *decoder) setPath(node ast.Node, keys []string, prefix, full string, value ast.Node, label string) ast.Node {
	var m *ast.MappingNode
	switch v := d.resolve(node, prefix).(type) {
	case nil, *ast.NullNode:
		if value == nil {
			return node // nothing to remove
		}
		m = &ast.MappingNode{BaseNode: &ast.BaseNode{}, IsFlowStyle: true}
		d.origin[m] = label
	case *ast.MappingNode:
		m = d.flatCopy(v, prefix)
	default:
		what := prefix
		if what == "" {
			what = "the document"
		}
		panic(bailout{&Error{File: label, Path: prefix, Msg: fmt.Sprintf(
			"cannot set %s: %s is %s, not a mapping", full, what, describe(v))}})
	}
	key, path := keys[0], join(prefix, keys[0])
	i := -1
	for j, mv := range m.Values {
		if keyName(mv.Key) == key {
			i = j
			break
		}
	}
	if len(keys) > 1 {
		var child ast.Node
		if i >= 0 {
			child = m.Values[i].Value
		}
		value = d.setPath(child, keys[1:], path, full, value, label)
	}
	switch {
	case value == nil && i >= 0:
		m.Values = append(m.Values[:i:i], m.Values[i+1:]...)
	case value == nil:
	case i >= 0:
		m.Values[i] = &ast.MappingValueNode{BaseNode: &ast.BaseNode{}, Key: m.Values[i].Key, Value: value}
	default:
		k := &ast.StringNode{BaseNode: &ast.BaseNode{}, Token: token.New(key, key, &token.Position{}), Value: key}
		d.origin[k] = label
		m.Values = append(m.Values, &ast.MappingValueNode{BaseNode: &ast.BaseNode{}, Key: k, Value: value})
	}
	return m
}

// flatCopy copies a mapping with its merge keys expanded into explicit
// keys, so that any key, merged or not, can be replaced or removed.
func (d *decoder) flatCopy(v *ast.MappingNode, path string) *ast.MappingNode {
	c := &ast.MappingNode{BaseNode: &ast.BaseNode{}, Start: v.Start, End: v.End, IsFlowStyle: v.IsFlowStyle}
	for _, e := range d.entries(v, path) {
		c.Values = append(c.Values, &ast.MappingValueNode{BaseNode: &ast.BaseNode{}, Key: e.key, Value: e.value})
	}
	if o, ok := d.origin[v]; ok {
		d.origin[c] = o
	}
	return c
}
