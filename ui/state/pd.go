package state

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/kvsim/kvsim/core/config"
)

// DefaultKVBandwidth is the prefill → decode KV transfer bandwidth (GB/s)
// that turning P/D on writes when the config had none before.
const DefaultKVBandwidth = 32

// SetPD turns prefill/decode disaggregation on or off by editing the
// text, as a user would in the YAML:
//
//   - on: the aggregated role becomes two copies of itself, prefill and
//     decode, with one replica each; engine.mode becomes disaggregated and
//     engine.kv_transfer gets the bandwidth kvGBps (0: an untimed
//     transfer). The transfer's bytes_per_token is left to its default,
//     the prefill role's kv_cache.bytes_per_token.
//   - off: the prefill role becomes the aggregated role; the decode role
//     and engine.kv_transfer go.
//
// Anchors and aliases between the roles are expanded first (Unalias), so
// the result holds plain copies that the controls can edit. The text need
// not parse as a config (it may be the one an earlier toggle broke); the
// config validator then says what the new mode rejects.
func SetPD(text string, on bool, kvGBps float64) (string, error) {
	text, err := Unalias(text)
	if err != nil {
		return "", err
	}
	roles := RolesInText(text)
	has := func(r string) bool {
		for _, x := range roles {
			if x == r {
				return true
			}
		}
		return false
	}
	if on {
		if !has(config.RoleAggregated) {
			if has(config.RolePrefill) && has(config.RoleDecode) {
				return text, nil // already disaggregated
			}
			return "", fmt.Errorf("P/D needs an aggregated role to copy (engine.workers.aggregated)")
		}
		if has(config.RolePrefill) || has(config.RoleDecode) {
			return "", fmt.Errorf("the config already has a prefill or decode role; edit it in the YAML")
		}
		if text, err = copyEntry(text, "engine.workers."+config.RoleAggregated, []string{config.RolePrefill, config.RoleDecode}); err != nil {
			return "", err
		}
		edits := [][2]string{
			{"engine.mode", config.ModeDisaggregated},
			{"engine.workers.prefill.parallelism.replicas", "1"},
			{"engine.workers.decode.parallelism.replicas", "1"},
			{"engine.kv_transfer", kvTransferText(kvGBps)},
		}
		for _, e := range edits {
			if text, err = SetYAML(text, e[0], e[1]); err != nil {
				return "", err
			}
		}
		return text, nil
	}
	if !has(config.RolePrefill) {
		if has(config.RoleAggregated) {
			return text, nil // already aggregated
		}
		return "", fmt.Errorf("aggregated mode needs the prefill role to copy (engine.workers.prefill)")
	}
	if has(config.RoleAggregated) {
		return "", fmt.Errorf("the config has both an aggregated and a prefill role; edit it in the YAML")
	}
	if text, err = copyEntry(text, "engine.workers."+config.RolePrefill, []string{config.RoleAggregated}); err != nil {
		return "", err
	}
	for _, e := range [][2]string{
		{"engine.workers.decode", "null"},
		{"engine.kv_transfer", "null"},
		{"engine.mode", config.ModeAggregated},
	} {
		if text, err = SetYAML(text, e[0], e[1]); err != nil {
			return "", err
		}
	}
	return text, nil
}

func kvTransferText(gbps float64) string {
	if gbps <= 0 {
		return "{}"
	}
	return "{bandwidth_gb_per_second: " + strconv.FormatFloat(gbps, 'f', -1, 64) + "}"
}

// RolesInText lists the role keys under engine.workers in the text's
// order, read from the YAML itself (for a text that does not parse as a
// config); nil when there is no such mapping.
func RolesInText(text string) []string {
	f, err := parser.ParseBytes([]byte(text), 0)
	if err != nil || len(f.Docs) == 0 {
		return nil
	}
	m, _ := f.Docs[0].Body.(*ast.MappingNode)
	for _, k := range []string{"engine", "workers"} {
		if m == nil {
			return nil
		}
		var next *ast.MappingNode
		for _, mv := range m.Values {
			if keyOf(mv) == k {
				next = mappingOf(mv.Value)
			}
		}
		m = next
	}
	if m == nil {
		return nil
	}
	var out []string
	for _, mv := range m.Values {
		switch k := keyOf(mv); k {
		case config.RoleAggregated, config.RolePrefill, config.RoleDecode:
			out = append(out, k)
		}
	}
	return out
}

// mappingOf is the mapping a value holds, looking through an anchor or an
// alias.
func mappingOf(n ast.Node) *ast.MappingNode {
	switch v := n.(type) {
	case *ast.MappingNode:
		return v
	case *ast.AnchorNode:
		return mappingOf(v.Value)
	case *ast.AliasNode:
		return nil // the roles of an aliased workers mapping are not looked up
	}
	return nil
}

// copyEntry replaces the entry at path (a block or flow mapping entry)
// with one entry per key in keys, each holding the same value text.
func copyEntry(text, path string, keys []string) (string, error) {
	f, err := parser.ParseBytes([]byte(text), parser.ParseComments)
	if err != nil {
		return "", fmt.Errorf("the YAML does not parse; fix it first")
	}
	e := &editor{text: text, lines: lineStarts(text), path: path}
	parent, ent := findEntry(f, strings.Split(path, "."))
	if ent == nil {
		return "", fmt.Errorf("%s: not found", path)
	}
	kp := ent.Key.GetToken().Position
	kstart := e.offset(kp)
	colon := strings.IndexByte(text[kstart:], ':')
	if colon < 0 {
		return e.refuse("cannot find the key's colon")
	}
	kend := kstart + colon
	if parent.IsFlowStyle {
		_, to, ok := e.span(ent.Value, true)
		if !ok {
			return e.refuse("cannot copy this value")
		}
		val := text[kend:to] // ": {…}"
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+val)
		}
		return e.splice(kstart, to, strings.Join(parts, ", ")), nil
	}
	from, to, indent, ok := e.blockEntryLines(ent)
	if !ok {
		return e.refuse("cannot copy this entry")
	}
	rest := e.text[kend:to] // ":" + the rest of the key's line and the lines below
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(indent + k + rest)
	}
	return e.splice(from, to, b.String()), nil
}

// findEntry walks block or flow mappings along keys and returns the last
// key's entry and the mapping holding it (nil when missing, or when the
// path runs through an anchor or alias).
func findEntry(f *ast.File, keys []string) (*ast.MappingNode, *ast.MappingValueNode) {
	if len(f.Docs) == 0 {
		return nil, nil
	}
	m, _ := f.Docs[0].Body.(*ast.MappingNode)
	for i, k := range keys {
		if m == nil {
			return nil, nil
		}
		var ent *ast.MappingValueNode
		for _, mv := range m.Values {
			if keyOf(mv) == k {
				ent = mv
			}
		}
		if ent == nil {
			return nil, nil
		}
		if i == len(keys)-1 {
			return m, ent
		}
		m, _ = ent.Value.(*ast.MappingNode)
	}
	return nil, nil
}

// Unalias expands every mapping entry whose value is an alias of an
// anchored block mapping (`decode: *role` after `prefill: &role …`) into a
// copy of the anchored text, re-indented, and then drops anchors that no
// alias uses any more. The result parses to the same config (tests check
// it); it lets the controls edit each role, which SetYAML refuses through
// an anchor or alias. Other aliases are left as they are.
func Unalias(text string) (string, error) {
	for range 64 {
		next, changed, err := expandOneAlias(text)
		if err != nil {
			return "", err
		}
		if !changed {
			return dropUnusedAnchors(text)
		}
		text = next
	}
	return "", fmt.Errorf("too many aliases to expand; edit them in the YAML")
}

type anchorEntry struct {
	ent  *ast.MappingValueNode
	node *ast.AnchorNode
}

// expandOneAlias expands the first expandable alias entry.
func expandOneAlias(text string) (string, bool, error) {
	f, err := parser.ParseBytes([]byte(text), parser.ParseComments)
	if err != nil {
		return "", false, fmt.Errorf("the YAML does not parse; fix it first")
	}
	if len(f.Docs) == 0 {
		return text, false, nil
	}
	anchors := map[string]anchorEntry{}
	type aliasEntry struct {
		ent  *ast.MappingValueNode
		name string
	}
	var aliases []aliasEntry
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		switch v := n.(type) {
		case *ast.MappingNode:
			for _, mv := range v.Values {
				switch x := mv.Value.(type) {
				case *ast.AnchorNode:
					if m, ok := x.Value.(*ast.MappingNode); ok && !m.IsFlowStyle && !v.IsFlowStyle {
						anchors[anchorName(x)] = anchorEntry{mv, x}
					}
				case *ast.AliasNode:
					if !v.IsFlowStyle {
						aliases = append(aliases, aliasEntry{mv, aliasName(x)})
					}
				}
				walk(mv.Value)
			}
		case *ast.AnchorNode:
			walk(v.Value)
		case *ast.SequenceNode:
			for _, x := range v.Values {
				walk(x)
			}
		}
	}
	walk(f.Docs[0].Body)
	e := &editor{text: text, lines: lineStarts(text), path: "alias"}
	for _, al := range aliases {
		an, ok := anchors[al.name]
		if !ok || keyOf(al.ent) == "<<" {
			continue
		}
		afrom, ato, aindent, ok1 := e.blockEntryLines(an.ent)
		dfrom, dto, dindent, ok2 := e.blockEntryLines(al.ent)
		if !ok1 || !ok2 || dfrom >= afrom && dfrom < ato {
			continue
		}
		// the anchored entry's text after "&name"
		at := e.offset(an.node.Start.Position)
		nl := strings.IndexByte(text[at:], '\n')
		if at < afrom || nl < 0 || at+1+len(al.name) > at+nl || strings.Contains(text[afrom:at], "\n") {
			continue
		}
		head := strings.TrimRight(text[at+1+len(al.name):at+nl], " ")
		body := text[at+nl+1 : ato]
		var b strings.Builder
		b.WriteString(dindent + keyOf(al.ent) + ":" + head + "\n")
		for _, line := range strings.SplitAfter(body, "\n") {
			if line == "" {
				continue
			}
			if strings.HasPrefix(line, aindent) {
				line = dindent + line[len(aindent):]
			}
			b.WriteString(line)
		}
		return e.splice(dfrom, dto, b.String()), true, nil
	}
	return text, false, nil
}

func anchorName(a *ast.AnchorNode) string {
	if a.Name == nil {
		return ""
	}
	return a.Name.GetToken().Value
}

func aliasName(a *ast.AliasNode) string {
	if a.Value == nil {
		return ""
	}
	return a.Value.GetToken().Value
}

// dropUnusedAnchors removes "&name" from anchors no alias refers to.
func dropUnusedAnchors(text string) (string, error) {
	f, err := parser.ParseBytes([]byte(text), parser.ParseComments)
	if err != nil {
		return "", fmt.Errorf("the YAML does not parse; fix it first")
	}
	used := map[string]bool{}
	var anchors []*ast.AnchorNode
	for _, n := range ast.FilterFile(ast.AliasType, f) {
		used[aliasName(n.(*ast.AliasNode))] = true
	}
	for _, n := range ast.FilterFile(ast.AnchorType, f) {
		if a := n.(*ast.AnchorNode); !used[anchorName(a)] {
			anchors = append(anchors, a)
		}
	}
	e := &editor{text: text, lines: lineStarts(text)}
	// from the last to the first, so earlier offsets stay valid
	for i := len(anchors) - 1; i >= 0; i-- {
		a := anchors[i]
		at := e.offset(a.Start.Position)
		end := at + 1 + len(anchorName(a))
		if at >= len(e.text) || e.text[at] != '&' {
			continue
		}
		from := at
		for from > 0 && e.text[from-1] == ' ' {
			from--
		}
		if end < len(e.text) && e.text[end] != '\n' && e.text[end] != '\r' {
			from = at // a value follows on the line: keep one space before it
			for end < len(e.text) && e.text[end] == ' ' {
				end++
			}
		}
		e.text = e.text[:from] + e.text[end:]
	}
	return e.text, nil
}
