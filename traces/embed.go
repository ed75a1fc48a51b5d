// Package traces ships the built-in examples: the connector comparison of
// docs/model/cases.md ("Case A: connector comparison") (connectors.yaml
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

// MooncakeConfig is the preset of the browser app's built-in "Mooncake
// conversation" trace (mooncake/preset.yaml: the Mooncake FAST'25
// conversation trace on 4 replicas, cut at 300 s of virtual time). Only the
// config is embedded: the 3 MB trace it reads (conversation_trace.jsonl) is
// served gzipped beside the site and fetched by the page when picked.
//
//go:embed mooncake/preset.yaml
var MooncakeConfig string

// MooncakeTrace is the path the preset reads its trace from, and
// MooncakeTraceGz the site path the page fetches it from.
const (
	MooncakeTrace   = "conversation_trace.jsonl"
	MooncakeTraceGz = "traces/conversation_trace.jsonl.gz"
)
