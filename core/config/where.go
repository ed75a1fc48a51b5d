package config

// Places says where the text of each config path was written: a position
// in the config file, or the --set override that wrote it. Checks made
// after parsing (the engine's refusals, replay's limits) use it to point at
// the offending text like the decoder's own errors do. It is kept beside
// the Config rather than in it, so that two configs that say the same
// thing stay equal however their text was laid out.
type Places struct {
	name string
	m    map[string]place
}

type place struct {
	line, col int
	set       string // "--set PATH=VALUE" when an override wrote the value
}

// places records where every decoded path was written.
func (d *decoder) places() *Places {
	p := &Places{name: d.name, m: make(map[string]place, len(d.nodes))}
	for path, n := range d.nodes {
		if set, ok := d.origin[n]; ok {
			p.m[path] = place{set: set}
			continue
		}
		l, col := position(n)
		p.m[path] = place{line: l, col: col}
	}
	return p
}

// ErrorAt returns an Error about path, positioned at the text that wrote
// path or, when the key was not written, at its nearest written ancestor.
func (p *Places) ErrorAt(path, msg string) *Error {
	e := &Error{File: p.name, Path: path, Msg: msg}
	for q := path; ; q = parent(q) {
		if pl, ok := p.m[q]; ok {
			if pl.set != "" {
				e.File = pl.set
			} else {
				e.Line, e.Col = pl.line, pl.col
			}
			return e
		}
		if q == "" {
			return e
		}
	}
}

// Place positions e when it names a path of this config but no position
// (an error made after parsing, e.g. by Config.Refuse); other errors are
// returned unchanged.
func (p *Places) Place(e *Error) *Error {
	if e.Line != 0 || e.File != p.name || e.Path == "" {
		return e
	}
	return p.ErrorAt(e.Path, e.Msg)
}

// Written tells whether path was written in the config text or by an
// override (as opposed to taking its default).
func (p *Places) Written(path string) bool {
	_, ok := p.m[path]
	return ok
}

// parent drops the last key of a dotted path ("" for a top-level key).
func parent(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '.' {
			return p[:i]
		}
	}
	return ""
}

// Refuse is an Error about path made after parsing (a setting the engine
// does not model yet). It carries no position; Places.Place adds it.
func (c *Config) Refuse(path, msg string) *Error {
	return &Error{File: c.Name, Path: path, Msg: msg}
}
