// Package traces ships the built-in examples: the connector comparison of
// docs/model/acceptance.md ("Case A: connector comparison") (connectors.yaml
// over delta-sessions.jsonl) and the §B restore (g2-restore.yaml over
// g2-restore.jsonl). The CLI runs the first by default, the browser app offers
// them in its trace picker, and the worker serves them at /api/examples.
// Regenerate delta-sessions.jsonl with `kvsim gen connectors-trace`.
package traces

import (
	"embed"
	"io"
	"io/fs"
)

// FS holds every example file.
//
//go:embed *.yaml *.jsonl
var FS embed.FS

// Open opens an example file by name (a replay.Opener).
func Open(name string) (io.ReadCloser, error) { return FS.Open(name) }

// Names lists the example files.
func Names() []string {
	var out []string
	entries, _ := fs.ReadDir(FS, ".")
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// Read returns an example file's bytes.
func Read(name string) ([]byte, error) { return FS.ReadFile(name) }
