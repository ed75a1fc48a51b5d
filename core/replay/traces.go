package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/trace"
	"github.com/kvsim/kvsim/traces"
)

// Opener opens a trace path as written in the config.
type Opener func(path string) (io.ReadCloser, error)

// Traces says where a job's trace paths are read from, in this order:
// Inline, Texts, Files, then the built-in examples when Builtin is set.
type Traces struct {
	// Inline is the trace of traffic.source.paths[0], whatever that path
	// says (the worker API's "trace"). A job with Inline and a synthetic
	// source is refused.
	Inline []byte
	// Texts are traces by the path the config writes (uploads).
	Texts map[string][]byte
	// Files opens paths a front end can read itself (the CLI: the file
	// system, relative to the config's directory).
	Files Opener
	// Builtin serves the examples of package traces by name.
	Builtin bool
	// Hint ends the message for a path nothing serves ("upload it", …).
	Hint string
}

// memFile serves a trace held in memory. Unlike io.NopCloser it keeps
// the reader's Len, so the trace reader copies it into one allocation
// instead of regrowing a copy (io.ReadAll: 13 MB more allocated per §E (docs/model/cases.md)
// benchmark iteration, 137.5 MB against 124.5).
type memFile struct{ *bytes.Reader }

func (memFile) Close() error { return nil }

// opener resolves the config's trace paths as t says.
func (t *Traces) opener(cfg *config.Config) Opener {
	return func(p string) (io.ReadCloser, error) {
		if t.Inline != nil {
			return memFile{bytes.NewReader(t.Inline)}, nil
		}
		if b, ok := t.Texts[p]; ok {
			return memFile{bytes.NewReader(b)}, nil
		}
		if t.Files != nil {
			f, err := t.Files(p)
			if err == nil || !t.Builtin || !errors.Is(err, fs.ErrNotExist) {
				return f, err
			}
		}
		if t.Builtin {
			if f, err := traces.Open(path.Clean(p)); err == nil && isTrace(p) {
				return f, nil
			} else if err == nil {
				f.Close()
			}
		}
		return nil, t.missing(p)
	}
}

// Read returns the bytes of trace path p as a job with these Traces
// would read them (a sharded sweep hashes them into its identity).
func (t *Traces) Read(p string) ([]byte, error) {
	f, err := t.opener(nil)(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// missing is the error for a path that nothing serves.
func (t *Traces) missing(p string) error {
	var msg strings.Builder
	fmt.Fprintf(&msg, "%q is not ", p)
	switch {
	case t.Builtin && t.Texts != nil:
		msg.WriteString("a built-in trace nor an uploaded one")
	case t.Builtin:
		msg.WriteString("a built-in trace")
	default:
		msg.WriteString("a trace this job can read")
	}
	if t.Builtin {
		fmt.Fprintf(&msg, " (built-in: %s)", strings.Join(BuiltinTraces(), ", "))
	}
	if t.Hint != "" {
		msg.WriteString(": " + t.Hint)
	}
	return errors.New(msg.String())
}

// BuiltinTraces lists the built-in example traces.
func BuiltinTraces() []string {
	var out []string
	for _, n := range traces.Names() {
		if isTrace(n) {
			out = append(out, n)
		}
	}
	return out
}

func isTrace(name string) bool { return path.Ext(name) == ".jsonl" }

// TraceInfo is what a front end shows of a trace it checked.
type TraceInfo struct {
	Sessions, Requests int
}

// CheckTrace reads a trace the way a run would (an upload, before a config
// names it): name is its file name in error positions, format and
// blockSize as traffic.source would give them. Its error is a KindTrace
// *Error.
func CheckTrace(name string, text []byte, format string, blockSize int) (info TraceInfo, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = internalError(v)
		}
	}()
	wl, err := trace.Read(bytes.NewReader(text), trace.Options{Name: name, Format: format, BlockSize: blockSize})
	if err != nil {
		if e := AsError(err); e.Kind != KindInternal {
			return info, e
		}
		return info, &Error{Kind: KindTrace, File: name, Msg: err.Error(), err: err}
	}
	return TraceInfo{Sessions: len(wl.Sessions), Requests: wl.Rows}, nil
}
