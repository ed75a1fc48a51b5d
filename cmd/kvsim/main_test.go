package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// cliEnv, when set to 1, makes the test binary behave as kvsim itself:
// `kvsim bench` re-executes its own binary (os.Executable), which under
// go test is this test binary.
const cliEnv = "KVSIM_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(cliEnv) == "1" {
		e := &env{stdout: os.Stdout, stderr: os.Stderr}
		os.Exit(run(e, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// cli runs one kvsim command line in-process, as main does.
func cli(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(&env{stdout: &out, stderr: &errb}, args)
	return out.String(), errb.String(), code
}

func TestDispatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{"no args", nil, exitUsage, "", "usage: kvsim COMMAND"},
		{"help", []string{"help"}, exitOK, "predict", ""},
		{"--version", []string{"--version"}, exitOK, "kvsim ", ""},
		{"version", []string{"version"}, exitOK, "built with go", ""},
		{"--help", []string{"--help"}, exitOK, "commands:", ""},
		{"help predict", []string{"help", "predict"}, exitOK, "--capture-per-request", ""},
		{"help unknown", []string{"help", "nope"}, exitUsage, "", `kvsim: help: unknown command "nope"`},
		{"unknown command", []string{"nope"}, exitUsage, "", `kvsim: unknown command "nope" (commands: predict, gen, bench`},
		{"predict -h", []string{"predict", "-h"}, exitOK, "usage: kvsim predict", ""},
		{"gen -h", []string{"gen", "-h"}, exitOK, "connectors-trace", ""},
		{"gen connectors-trace --help", []string{"gen", "connectors-trace", "--help"}, exitOK, "--sessions N", ""},
		{"bench -h", []string{"bench", "-h"}, exitOK, "docs/model/cases.md (case E)", ""},
		{"unknown flag", []string{"predict", "--nope"}, exitUsage, "", "kvsim: predict: flag provided but not defined: -nope"},
		{"positional", []string{"predict", "x.yaml"}, exitUsage, "", `kvsim: predict: unexpected argument "x.yaml"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := cli(t, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(errs, tc.stderr) {
				t.Errorf("kvsim %s: exit %d, stdout %q, stderr %q; want exit %d, stdout ∋ %q, stderr ∋ %q",
					strings.Join(tc.args, " "), code, out, errs, tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

// TestCommandsHaveHelp keeps the dispatch table complete: every entry
// has a name, a summary and a help text that starts with its usage line.
func TestCommandsHaveHelp(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range commands {
		if c.name == "" || c.summary == "" || c.run == nil || seen[c.name] {
			t.Errorf("bad or duplicate command entry %q", c.name)
		}
		seen[c.name] = true
		if !strings.HasPrefix(c.help, "usage: kvsim "+c.name) {
			t.Errorf("%s: help does not start with %q", c.name, "usage: kvsim "+c.name)
		}
	}
}
