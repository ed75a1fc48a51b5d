// Command kvsim replays LLM-serving traffic through the core's model of
// vLLM's scheduler, GPU KV cache (G1) and CPU offload tier (G2).
//
//	kvsim predict --config FILE [--output-dir DIR] [--format table|json] …
//	kvsim gen connectors-trace [--sessions N] [--turns N] [--output FILE]
//	kvsim bench [--runs N] [--host-offload BLOCKS --connector NAME]
//
// Every number comes from core/replay; this package only reads files,
// parses flags and prints. docs/cli.md describes every subcommand and flag.
//
// # Adding a subcommand
//
// Write one file, NAME.go, holding the command's help text and a
// func(*env, []string) error that parses its own flags with newFlagSet and
// parseFlags, then add one line to the commands table below. Nothing else
// changes: dispatch, `kvsim help`, -h, exit codes and the "kvsim: " error
// prefix are handled here. Return usagef(…) for a command line the command
// cannot accept (exit 2) and any other error for a failed run (exit 1).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"golang.org/x/term"
)

// A command is one subcommand of kvsim.
type command struct {
	name    string
	summary string // one line for `kvsim help`
	help    string // the full text for `kvsim help NAME` and `kvsim NAME -h`
	run     func(e *env, args []string) error
}

// commands is the dispatch table, in the order `kvsim help` lists them.
// One line per subcommand; see "Adding a subcommand" above.
var commands = []command{
	{"predict", "replay a config and report what happened", predictHelp, runPredict},
	{"gen", "write a built-in trace (connectors-trace)", genHelp, runGen},
	{"bench", "time `kvsim predict` on the acceptance §E benchmark", benchHelp, runBench},
	{"sweep", "run a grid of --vary values in parallel; CSV, JSON and G2 sizing plots", sweepHelp, runSweep},
	{"inspect", "print one pass's G1 and G2 maps and events from passes.jsonl", inspectHelp, runInspect},
	{"diff", "compare two per-pass records: first divergence, evicted-vs-kept blocks", diffHelp, runDiff},
}

// env is what a command may touch besides the file system: its output
// streams and whether stderr is a terminal (only then is a progress bar
// drawn). Tests build one over buffers.
type env struct {
	stdout, stderr io.Writer
	tty            bool
}

func main() {
	e := &env{stdout: os.Stdout, stderr: os.Stderr, tty: term.IsTerminal(int(os.Stderr.Fd()))}
	os.Exit(run(e, os.Args[1:]))
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the run failed: bad config, unreadable trace, I/O
	exitUsage = 2 // the command line is wrong
)

// run executes one kvsim command line (without the program name) and
// returns the process exit code. main and the tests call it.
func run(e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, overview())
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "version", "-version", "--version":
		fmt.Fprintln(e.stdout, version())
		return exitOK
	case "help", "-h", "-help", "--help":
		if len(rest) == 0 {
			fmt.Fprint(e.stdout, overview())
			return exitOK
		}
		c := lookup(rest[0])
		if c == nil {
			return fail(e, usagef("help: unknown command %q", rest[0]))
		}
		fmt.Fprint(e.stdout, c.help)
		return exitOK
	}
	c := lookup(name)
	if c == nil {
		return fail(e, usagef("unknown command %q (commands: %s)", name, commandNames()))
	}
	err := c.run(e, rest)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(e.stdout, c.help)
		return exitOK
	}
	return fail(e, err)
}

// fail prints err as "kvsim: <message>" and returns its exit code.
func fail(e *env, err error) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(e.stderr, "kvsim: %v\n", err)
	var u *usageError
	if errors.As(err, &u) {
		return exitUsage
	}
	return exitError
}

func lookup(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

func overview() string {
	var b strings.Builder
	b.WriteString("kvsim replays LLM-serving traffic through a model of vLLM's scheduler and KV cache tiers.\n\n")
	b.WriteString("usage: kvsim COMMAND [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.summary)
	}
	b.WriteString("  version    print kvsim's version (also --version)\n")
	b.WriteString("\n'kvsim help COMMAND' or 'kvsim COMMAND -h' describes a command's flags (docs/cli.md has them all).\n")
	return b.String()
}

// usageError is a command line a command cannot accept (exit 2).
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// newFlagSet returns a flag set that reports nothing itself: parseFlags
// turns its errors into usage errors and run prints the help text.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args and rejects positional arguments. -h and -help
// return flag.ErrHelp (run prints the command's help, exit 0).
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := parseFlagsArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q (see 'kvsim %s -h')", fs.Name(), fs.Arg(0), fs.Name())
	}
	return nil
}

// parseFlagsArgs is parseFlags for commands that take positional
// arguments (after the flags).
func parseFlagsArgs(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%s: %v (see 'kvsim %s -h')", fs.Name(), err, fs.Name())
	}
	return nil
}

// stringList is a repeatable string flag (--set).
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// version is "kvsim VERSION, built with goX.Y.Z": the module version when
// the binary was built from a module (go install …@v1.2.3), otherwise the
// commit it was built from (with "+dirty" for uncommitted edits), or
// "devel" when the build recorded neither.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "kvsim devel"
	}
	v := info.Main.Version
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		v = "commit " + rev[:min(12, len(rev))] + dirty
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	return fmt.Sprintf("kvsim %s, built with %s", v, info.GoVersion)
}
