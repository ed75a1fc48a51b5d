package config

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Parse reads one YAML document. name is used in error positions (a file
// path or "<default>"); dir is stored in Config.Dir. overrides are --set
// "dotted.path=VALUE" strings applied to the document before decoding
// (VALUE parsed as a YAML scalar or flow value; "path=null" removes the
// key; missing intermediate mappings are created).
//
// A rejected config returns a *Error for the first problem found, in a
// fixed order: YAML syntax, overrides in the order given, traffic, engine,
// then the checks that relate traffic and engine.
func Parse(name, dir string, data []byte, overrides []string) (*Config, error) {
	cfg, _, err := ParsePlaced(name, dir, data, overrides)
	return cfg, err
}

// ParsePlaced is Parse that also says where each path was written.
func ParsePlaced(name, dir string, data []byte, overrides []string) (cfg *Config, places *Places, err error) {
	d := &decoder{
		name:    name,
		aliases: map[*ast.AliasNode]ast.Node{},
		origin:  map[ast.Node]string{},
		nodes:   map[string]ast.Node{},
		merged:  map[*ast.MappingNode][]entry{},
	}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			cfg, places, err = nil, nil, b.err
		}
	}()
	root := d.document(data)
	for _, o := range overrides {
		root = d.override(root, o)
	}
	c := &Config{Name: name, Dir: dir}
	d.decode(root, c)
	return c, d.places(), nil
}

// document parses data into the body of its single document (nil for an
// empty document) and binds its aliases.
func (d *decoder) document(data []byte) ast.Node {
	f, err := parseYAML(data)
	if err != nil {
		d.syntaxError(err)
	}
	if len(f.Docs) > 1 {
		// Point at the second document's "---" (its body may be empty).
		e := &Error{File: d.name, Msg: fmt.Sprintf("expected one YAML document, got %d", len(f.Docs))}
		e.Line, e.Col = tokenPosition(f.Docs[1].Start)
		if e.Line == 0 {
			e.Line, e.Col = position(f.Docs[1].Body)
		}
		panic(bailout{e})
	}
	if len(f.Docs) == 0 {
		return nil
	}
	root := f.Docs[0].Body
	collectAliases(root, map[string]ast.Node{}, d.aliases)
	return root
}

// parseYAML runs the goccy parser. Duplicate keys are allowed through so
// that the decoder reports them with its own message and field path.
func parseYAML(data []byte) (f *ast.File, err error) {
	defer func() {
		// A parser bug must not take the caller down; report the input as
		// unreadable instead.
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("YAML parser failed: %v", r)
		}
	}()
	return parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
}

func (d *decoder) syntaxError(err error) {
	e := &Error{File: d.name, Msg: yamlMessage(err)}
	var pe interface{ GetToken() *token.Token }
	if errors.As(err, &pe) {
		e.Line, e.Col = tokenPosition(pe.GetToken())
	}
	panic(bailout{e})
}

// yamlMessage is the message of a goccy error without the multi-line
// source excerpt its Error method renders.
func yamlMessage(err error) string {
	var pe interface{ GetMessage() string }
	if errors.As(err, &pe) {
		return pe.GetMessage()
	}
	return err.Error()
}

// decode fills c from the document root.
func (d *decoder) decode(root ast.Node, c *Config) {
	top := d.mapping(d.resolve(root, ""), "", "traffic", "engine")
	if t, ok := top.get("traffic"); ok {
		c.Traffic = d.traffic(d.mapping(t, "traffic", "source", "load", "stop"))
		d.agenticTrace = c.Traffic.Source.Type == SourceTrace && Agentic(c.Traffic.Source.Format)
	} else {
		c.Traffic = defaultTraffic()
	}
	c.Engine = d.engine(top)
	d.crossCheck(c)
}
