package state

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// SetYAML returns text with the value at path (dotted keys from the
// document root) set to value, a YAML scalar or flow collection as a
// `--set PATH=VALUE` would write it; value "null" removes the key. It edits
// the text in place, so comments, key order and layout elsewhere are kept,
// and its result parses to the same config as the CLI's --set applied to
// text (state tests check this). Missing mappings on the path are created
// as flow mappings. Paths through anchors, aliases or merge keys are
// refused with an error that asks for a YAML edit.
func SetYAML(text, path, value string) (string, error) {
	keys := strings.Split(path, ".")
	for _, k := range keys {
		if k == "" {
			return "", fmt.Errorf("invalid path %q", path)
		}
	}
	value = strings.TrimSpace(value)
	if value == "" {
		return "", fmt.Errorf("%s: empty value", path)
	}
	f, err := parser.ParseBytes([]byte(text), parser.ParseComments)
	if err != nil {
		return "", fmt.Errorf("the YAML does not parse; fix it first")
	}
	e := &editor{text: text, lines: lineStarts(text), path: path}
	var body ast.Node
	if len(f.Docs) > 0 {
		body = f.Docs[0].Body
	}
	remove := value == "null" || value == "~"
	switch m := body.(type) {
	case nil, *ast.NullNode, *ast.CommentGroupNode:
		if remove {
			return text, nil
		}
		// an empty document: the whole text becomes the mapping
		return strings.TrimRight(text, "\n") + "\n" + keys[0] + ": " + wrap(keys[1:], value) + "\n", nil
	case *ast.MappingNode:
		return e.set(m, keys, value, remove)
	}
	return "", fmt.Errorf("the document is not a mapping")
}

type editor struct {
	text  string
	lines []int // byte offset of each line start
	path  string
}

func lineStarts(s string) []int {
	out := []int{0}
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, i+1)
		}
	}
	return out
}

// offset converts goccy's 1-based line and rune column to a byte offset.
func (e *editor) offset(p *token.Position) int {
	if p.Line < 1 || p.Line > len(e.lines) {
		return len(e.text)
	}
	o := e.lines[p.Line-1]
	for c := 1; c < p.Column && o < len(e.text) && e.text[o] != '\n'; c++ {
		_, n := utf8.DecodeRuneInString(e.text[o:])
		o += n
	}
	return o
}

func (e *editor) splice(from, to int, with string) string {
	return e.text[:from] + with + e.text[to:]
}

// wrap nests value under keys as flow mappings: [a b], 1 → {a: {b: 1}}.
func wrap(keys []string, value string) string {
	for i := len(keys) - 1; i >= 0; i-- {
		value = "{" + keys[i] + ": " + value + "}"
	}
	return value
}

func keyOf(mv *ast.MappingValueNode) string {
	if mv.Key == nil {
		return ""
	}
	if t := mv.Key.GetToken(); t != nil {
		return t.Value
	}
	return ""
}

func (e *editor) refuse(why string) (string, error) {
	return "", fmt.Errorf("%s: %s; edit it in the YAML", e.path, why)
}

func (e *editor) set(m *ast.MappingNode, keys []string, value string, remove bool) (string, error) {
	var ent *ast.MappingValueNode
	merged := false
	for _, mv := range m.Values {
		k := keyOf(mv)
		if k == "<<" {
			merged = true
		}
		if k == keys[0] {
			ent = mv
		}
	}
	if ent == nil {
		if remove {
			if merged {
				return e.refuse("the key may come from a merge key")
			}
			return e.text, nil
		}
		if merged && len(keys) > 1 {
			return e.refuse("the mapping has a merge key")
		}
		return e.insert(m, keys[0], wrap(keys[1:], value))
	}
	v := ent.Value
	switch v.(type) {
	case *ast.AnchorNode, *ast.AliasNode, *ast.TagNode:
		return e.refuse("the value is an anchor, alias or tag")
	}
	if len(keys) > 1 {
		switch c := v.(type) {
		case *ast.MappingNode:
			return e.set(c, keys[1:], value, remove)
		case *ast.NullNode:
			if remove {
				return e.text, nil
			}
			return e.replaceEntry(m, ent, keys[0], wrap(keys[1:], value))
		}
		return "", fmt.Errorf("%s: cannot set below %s: it is not a mapping", e.path, keys[0])
	}
	if remove {
		return e.removeEntry(m, ent)
	}
	if from, to, ok := e.span(v, m.IsFlowStyle); ok {
		return e.splice(from, to, value), nil
	}
	return e.replaceEntry(m, ent, keys[0], value)
}

// span is the byte range of a scalar or flow collection value; ok is false
// for block collections, block scalars and empty values.
func (e *editor) span(v ast.Node, inFlow bool) (from, to int, ok bool) {
	switch n := v.(type) {
	case *ast.MappingNode:
		if !n.IsFlowStyle || n.End == nil {
			return 0, 0, false
		}
		return e.offset(n.Start.Position), e.offset(n.End.Position) + 1, true
	case *ast.SequenceNode:
		if !n.IsFlowStyle || n.End == nil {
			return 0, 0, false
		}
		return e.offset(n.Start.Position), e.offset(n.End.Position) + 1, true
	case *ast.NullNode, *ast.LiteralNode, *ast.CommentGroupNode:
		return 0, 0, false
	}
	t := v.GetToken()
	if t == nil || t.Position == nil {
		return 0, 0, false
	}
	from = e.offset(t.Position)
	return from, e.scalarEnd(from, inFlow), true
}

// scalarEnd finds where a one-line scalar starting at from ends.
func (e *editor) scalarEnd(from int, inFlow bool) int {
	s := e.text
	if from >= len(s) {
		return from
	}
	switch s[from] {
	case '"':
		for i := from + 1; i < len(s); i++ {
			if s[i] == '\\' {
				i++
			} else if s[i] == '"' {
				return i + 1
			}
		}
		return len(s)
	case '\'':
		for i := from + 1; i < len(s); i++ {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					i++
					continue
				}
				return i + 1
			}
		}
		return len(s)
	}
	end := from
	for i := from; i < len(s); i++ {
		c := s[i]
		if c == '\n' || c == '\r' || (inFlow && (c == ',' || c == '}' || c == ']')) || (c == '#' && i > from && (s[i-1] == ' ' || s[i-1] == '\t')) {
			break
		}
		if c != ' ' && c != '\t' {
			end = i + 1
		}
	}
	return end
}

// insert adds key: value to mapping m.
func (e *editor) insert(m *ast.MappingNode, key, value string) (string, error) {
	if m.IsFlowStyle {
		at := e.offset(m.Start.Position) + 1
		sep := ""
		if len(m.Values) > 0 {
			sep = ", "
		}
		return e.splice(at, at, key+": "+value+sep), nil
	}
	if len(m.Values) == 0 || m.Values[0].Key == nil {
		return e.refuse("cannot find where to add " + key)
	}
	kp := m.Values[0].Key.GetToken().Position
	ls := e.lines[kp.Line-1]
	at := e.offset(kp)
	if strings.TrimLeft(e.text[ls:at], " ") != "" {
		return e.refuse("cannot add " + key + " beside this mapping")
	}
	return e.splice(ls, ls, e.text[ls:at]+key+": "+value+"\n"), nil
}

// blockEntryLines is the byte range of the whole lines a block mapping's
// entry spans: from its key's line to the next line that is indented no
// deeper than the key (blank lines excluded).
func (e *editor) blockEntryLines(ent *ast.MappingValueNode) (from, to int, indent string, ok bool) {
	kp := ent.Key.GetToken().Position
	from = e.lines[kp.Line-1]
	at := e.offset(kp)
	indent = e.text[from:at]
	if strings.TrimLeft(indent, " ") != "" {
		return 0, 0, "", false
	}
	to = len(e.text)
	for l := kp.Line; l < len(e.lines); l++ {
		ls := e.lines[l]
		rest := e.text[ls:]
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			rest = rest[:i]
		}
		trimmed := strings.TrimLeft(rest, " ")
		if strings.TrimSpace(trimmed) == "" {
			continue
		}
		if len(rest)-len(trimmed) <= len(indent) {
			to = ls
			break
		}
	}
	if to == len(e.text) && !strings.HasSuffix(e.text, "\n") {
		e.text += "\n"
		to = len(e.text)
	}
	return from, to, indent, true
}

// replaceEntry rewrites one entry as key: value (a block entry becomes one
// line).
func (e *editor) replaceEntry(m *ast.MappingNode, ent *ast.MappingValueNode, key, value string) (string, error) {
	if m.IsFlowStyle {
		return e.refuse("cannot replace an empty value inside a flow mapping")
	}
	from, to, indent, ok := e.blockEntryLines(ent)
	if !ok {
		return e.refuse("cannot replace " + key)
	}
	return e.splice(from, to, indent+key+": "+value+"\n"), nil
}

// removeEntry deletes one entry (and, in a flow mapping, its comma).
func (e *editor) removeEntry(m *ast.MappingNode, ent *ast.MappingValueNode) (string, error) {
	if !m.IsFlowStyle {
		from, to, _, ok := e.blockEntryLines(ent)
		if !ok {
			return e.refuse("cannot remove this key")
		}
		return e.splice(from, to, ""), nil
	}
	from := e.offset(ent.Key.GetToken().Position)
	_, to, ok := e.span(ent.Value, true)
	if !ok {
		return e.refuse("cannot remove this key")
	}
	s := e.text
	// take the following comma and spaces, or else the preceding ones
	j := to
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j < len(s) && s[j] == ',' {
		j++
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		return e.splice(from, j, ""), nil
	}
	i := from
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	if i > 0 && s[i-1] == ',' {
		i--
		for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
			i--
		}
		return e.splice(i, to, ""), nil
	}
	return e.splice(from, to, ""), nil
}
