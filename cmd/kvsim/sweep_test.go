package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/traces"
)

// TestSweepDefault: `kvsim sweep --output-dir DIR` runs the §A default
// sweep and writes the CSV, the JSON and the three plots; the table on
// stdout has the §A rows.
func TestSweepDefault(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	out, errs, code := cli(t, "sweep", "--output-dir", dir, "--parallel", "2")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, row := range []string{
		"192                           offloading_v0_24     11488        8800",
		"192                           simple_cpu_v0_32     12432        8368",
		"2048                          simple_cpu_v0_32     15568        5248",
	} {
		if !strings.Contains(out, row) {
			t.Errorf("stdout lacks %q:\n%s", row, out)
		}
	}
	for _, name := range sweepOutputs {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "sweep.csv" && bytes.Count(b, []byte("\n")) != 25 {
			t.Errorf("sweep.csv has %d lines; want 25", bytes.Count(b, []byte("\n")))
		}
		if strings.HasSuffix(name, ".svg") && !bytes.Contains(b, []byte("<svg")) {
			t.Errorf("%s is not SVG", name)
		}
	}

	// The directory is not empty now: refused without --overwrite.
	if _, errs, code := cli(t, "sweep", "--output-dir", dir); code != exitError || !strings.Contains(errs, "is not empty") {
		t.Errorf("second sweep: exit %d, stderr %q", code, errs)
	}
	// With --overwrite, a sweep that draws no plot removes the old ones.
	_, errs, code = cli(t, "sweep", "--output-dir", dir, "--overwrite", "--vary", "connector=offloading_v0_24,simple_cpu_v0_32")
	if code != exitOK {
		t.Fatalf("overwrite: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "restored.svg")); !os.IsNotExist(err) {
		t.Errorf("restored.svg survived a sweep without plots (%v)", err)
	}
}

// TestSweepConfigFile: --config resolves the trace against the config's
// directory; --set applies to every point.
func TestSweepConfigFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"connectors.yaml", "delta-sessions.jsonl"} {
		b, _ := traces.Read(name)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errs, code := cli(t, "sweep", "--config", filepath.Join(dir, "connectors.yaml"),
		"--set", "engine.workers.aggregated.kv_cache.host_offload.connector=offloading_v0_32",
		"--vary", "num_host_blocks=128,192")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "192                 14144        6544") {
		t.Errorf("stdout:\n%s", out)
	}
}

func TestSweepErrors(t *testing.T) {
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--vary", "num_host_blocks=64,abc"}, exitUsage,
			`kvsim: sweep: --vary num_host_blocks=64,abc: value "abc": engine.workers.aggregated.kv_cache.host_offload.num_host_blocks: expected a positive integer, got string "abc"`},
		{[]string{"--vary", "connector="}, exitUsage,
			`kvsim: sweep: --vary connector=: empty list of values: give at least one value after '='`},
		{[]string{"--vary", "host_offload.nope=1"}, exitUsage,
			`kvsim: sweep: --vary host_offload.nope=1: engine.workers.aggregated.kv_cache.host_offload.nope: unknown key "nope"`},
		{[]string{"--set", "traffic.nope=1"}, exitError,
			`kvsim: --set traffic.nope=1: traffic.nope: unknown key "nope"`},
		{[]string{"--parallel", "0"}, exitUsage, "kvsim: sweep: --parallel must be at least 1, got 0"},
		{[]string{"--x", "connector"}, exitUsage, "kvsim: sweep: --x connector: its values are not all numbers"},
		{[]string{"--x", "nope"}, exitUsage, "kvsim: sweep: --x nope: not the PATH of a --vary"},
		{[]string{"extra"}, exitUsage, `kvsim: sweep: unexpected argument "extra"`},
		{[]string{"--config", "/nonexistent/x.yaml"}, exitError, "no such file"},
	} {
		_, errs, code := cli(t, append([]string{"sweep"}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.stderr) {
			t.Errorf("kvsim sweep %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, errs, c.code, c.stderr)
		}
	}
	if out, _, code := cli(t, "sweep", "-h"); code != exitOK || !strings.Contains(out, "usage: kvsim sweep") {
		t.Errorf("sweep -h: exit %d, %q", code, out)
	}
}
