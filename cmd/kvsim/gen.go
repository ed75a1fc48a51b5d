package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/kvsim/kvsim/core/trace"
)

const genHelp = `usage: kvsim gen connectors-trace [--sessions N] [--turns N] [--output FILE]

Writes a built-in trace to stdout, or to FILE with --output.

connectors-trace   the mooncake-delta trace of acceptance §A: sessions s0.. written one
                   after another, turn 0 with 256 new tokens, later turns 64, 64 output
                   tokens each, "delay": 200 on every row after turn 0. With the
                   defaults it is traces/delta-sessions.jsonl byte for byte.
  --sessions N     sessions (default 8; the §E benchmark uses 10000)
  --turns N        turns per session (default 6)
  --output FILE    write FILE instead of stdout
`

// generators are the traces `kvsim gen` writes, by name. Add one with an
// entry here and a function taking the generator's own flags.
var generators = []struct {
	name string
	run  func(e *env, args []string) error
}{
	{"connectors-trace", genConnectorsTrace},
}

func runGen(e *env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			return parseFlags(newFlagSet("gen"), args[:1])
		}
		return usagef("gen: name a generator (%s)", generatorNames())
	}
	for _, g := range generators {
		if g.name == args[0] {
			return g.run(e, args[1:])
		}
	}
	return usagef("gen: unknown generator %q (generators: %s)", args[0], generatorNames())
}

func generatorNames() string {
	var names []string
	for _, g := range generators {
		names = append(names, g.name)
	}
	return strings.Join(names, ", ")
}

func genConnectorsTrace(e *env, args []string) error {
	spec := trace.ConnectorsTraceDefault()
	var output string
	fs := newFlagSet("gen")
	fs.IntVar(&spec.Sessions, "sessions", spec.Sessions, "")
	fs.IntVar(&spec.Turns, "turns", spec.Turns, "")
	fs.StringVar(&output, "output", "", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if spec.Sessions <= 0 || spec.Turns <= 0 {
		return usagef("gen connectors-trace: --sessions and --turns must be positive, got %d and %d", spec.Sessions, spec.Turns)
	}
	if output == "" {
		return trace.WriteConnectorsTrace(e.stdout, spec)
	}
	return writeFile(output, func(w io.Writer) error { return trace.WriteConnectorsTrace(w, spec) })
}

// writeConnectorsTrace writes the §A-shaped trace (docs/model/cases.md) with the given number of
// sessions to path (the benchmark's input).
func writeConnectorsTrace(path string, sessions int) error {
	spec := trace.ConnectorsTraceDefault()
	spec.Sessions = sessions
	if err := writeFile(path, func(w io.Writer) error { return trace.WriteConnectorsTrace(w, spec) }); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	return nil
}
