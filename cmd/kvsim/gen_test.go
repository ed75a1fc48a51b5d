package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestGen(t *testing.T) {
	shipped := readFile(t, filepath.Join(examples, "delta-sessions.jsonl"))
	for _, tc := range []struct {
		name   string
		args   func(dir string) []string
		code   int
		stderr string
		check  func(t *testing.T, dir, stdout string)
	}{
		{
			name: "defaults equal traces/delta-sessions.jsonl",
			args: func(string) []string { return []string{"gen", "connectors-trace"} },
			check: func(t *testing.T, _, stdout string) {
				if d := firstDiff("traces/delta-sessions.jsonl", []byte(stdout), shipped); d != "" {
					t.Error(d)
				}
			},
		},
		{
			name: "--output",
			args: func(dir string) []string {
				return []string{"gen", "connectors-trace", "--output", filepath.Join(dir, "t.jsonl")}
			},
			check: func(t *testing.T, dir, stdout string) {
				if stdout != "" {
					t.Errorf("stdout %q; want nothing", stdout)
				}
				if !bytes.Equal(readFile(t, filepath.Join(dir, "t.jsonl")), shipped) {
					t.Error("the written file differs from traces/delta-sessions.jsonl")
				}
			},
		},
		{
			name: "--sessions and --turns",
			args: func(string) []string { return []string{"gen", "connectors-trace", "--sessions", "2", "--turns", "3"} },
			check: func(t *testing.T, _, stdout string) {
				want := `{"request_id": "s0t0", "session_id": "s0", "input_length": 256, "output_length": 64, "hash_ids": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]}`
				lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
				if len(lines) != 6 || lines[0] != want || !strings.HasPrefix(lines[5], `{"request_id": "s1t2", "session_id": "s1", "input_length": 64,`) ||
					!strings.HasSuffix(lines[5], `"hash_ids": [45, 46, 47, 48], "delay": 200}`) {
					t.Errorf("unexpected trace:\n%s", stdout)
				}
			},
		},
		{name: "no generator", args: func(string) []string { return []string{"gen"} }, code: exitUsage, stderr: "gen: name a generator (connectors-trace)"},
		{name: "unknown generator", args: func(string) []string { return []string{"gen", "x"} }, code: exitUsage, stderr: `unknown generator "x"`},
		{name: "zero sessions", args: func(string) []string { return []string{"gen", "connectors-trace", "--sessions", "0"} }, code: exitUsage, stderr: "must be positive"},
		{name: "bad flag", args: func(string) []string { return []string{"gen", "connectors-trace", "--sessions", "x"} }, code: exitUsage, stderr: `invalid value "x" for flag -sessions`},
		{
			name: "unwritable output",
			args: func(dir string) []string {
				return []string{"gen", "connectors-trace", "--output", filepath.Join(dir, "missing", "t.jsonl")}
			},
			code: exitError, stderr: "no such file or directory",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			stdout, stderr, code := cli(t, tc.args(dir)...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("exit %d, stderr %q; want exit %d, stderr ∋ %q", code, stderr, tc.code, tc.stderr)
			}
			if tc.check != nil {
				tc.check(t, dir, stdout)
			}
		})
	}
}
