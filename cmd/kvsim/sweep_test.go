package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/traces"
)

// TestSweepDefault: `kvsim sweep --output-dir DIR` runs the §A (docs/model/cases.md) default
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

// TestSweepShards: the default sweep in 3 shards (one of them through
// --shard auto/3 and JOB_COMPLETION_INDEX), merged, writes the same
// sweep.csv, sweep.json and plots as the unsharded sweep; a missing shard
// and a shard of another grid are refused.
func TestSweepShards(t *testing.T) {
	tmp := t.TempDir()
	whole, parts := filepath.Join(tmp, "whole"), filepath.Join(tmp, "parts")
	if _, errs, code := cli(t, "sweep", "--output-dir", whole); code != exitOK {
		t.Fatalf("unsharded: exit %d: %s", code, errs)
	}
	for _, arg := range []string{"0/3", "2/3"} {
		if out, errs, code := cli(t, "sweep", "--shard", arg, "--output-dir", parts); code != exitOK || !strings.Contains(out, "wrote "+parts) {
			t.Fatalf("--shard %s: exit %d: %s%s", arg, code, out, errs)
		}
	}
	// Re-running a shard that is done runs nothing.
	if out, errs, code := cli(t, "sweep", "--shard", "0/3", "--output-dir", parts); code != exitOK || !strings.Contains(out, "shard-0-of-3.json is already done") {
		t.Errorf("--shard 0/3 again: exit %d: %s%s", code, out, errs)
	}
	_, errs, code := cli(t, "sweep", "merge", parts)
	if code != exitError || !strings.Contains(errs, "kvsim: 8 of 24 points are missing; re-run the shards that owe them:\n  shard 1/3 (shard-1-of-3.json, `kvsim sweep --shard 1/3`): point ") {
		t.Errorf("merge without shard 1: exit %d, stderr %q", code, errs)
	}
	t.Setenv("JOB_COMPLETION_INDEX", "1")
	if _, errs, code := cli(t, "sweep", "--shard", "auto/3", "--output-dir", parts); code != exitOK {
		t.Fatalf("--shard auto/3: exit %d: %s", code, errs)
	}
	merged := filepath.Join(tmp, "merged")
	if _, errs, code := cli(t, "sweep", "merge", parts, "--output-dir", merged); code != exitUsage || !strings.Contains(errs, "flag --output-dir after the directories: flags go first") {
		t.Errorf("merge with a flag after the directories: exit %d, stderr %q", code, errs)
	}
	if out, errs, code := cli(t, "sweep", "merge", "--output-dir", merged, parts); code != exitOK || !strings.Contains(out, "192                           simple_cpu_v0_32     12432        8368") {
		t.Fatalf("merge: exit %d: %s%s", code, out, errs)
	}
	for _, name := range sweepOutputs {
		a, _ := os.ReadFile(filepath.Join(whole, name))
		b, err := os.ReadFile(filepath.Join(merged, name))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("merged %s differs from the unsharded sweep's (%v)", name, err)
		}
	}
	// Merging into the shards' directory, twice: the second needs --overwrite.
	if _, errs, code := cli(t, "sweep", "merge", parts); code != exitOK {
		t.Errorf("merge into %s: exit %d: %s", parts, code, errs)
	}
	if _, errs, code := cli(t, "sweep", "merge", parts); code != exitError || !strings.Contains(errs, "already holds sweep.csv (add --overwrite") {
		t.Errorf("merge again: exit %d, stderr %q", code, errs)
	}

	other := filepath.Join(tmp, "other")
	if _, errs, code := cli(t, "sweep", "--shard", "1/3", "--output-dir", other, "--vary", "connector=offloading_v0_24,simple_cpu_v0_32"); code != exitOK {
		t.Fatalf("other grid: exit %d: %s", code, errs)
	}
	_, errs, code = cli(t, "sweep", "merge", "--output-dir", merged, "--overwrite",
		filepath.Join(parts, "shard-0-of-3.json"), filepath.Join(other, "shard-1-of-3.json"), filepath.Join(parts, "shard-2-of-3.json"))
	if code != exitError || !strings.Contains(errs, "other/shard-1-of-3.json is a shard of a different sweep than "+parts+
		"/shard-0-of-3.json: another grid: --vary connector=offloading_v0_24,simple_cpu_v0_32 vs --vary host_offload.num_host_blocks=") {
		t.Errorf("merge with another grid's shard: exit %d, stderr %q", code, errs)
	}
}

func TestSweepShardErrors(t *testing.T) {
	t.Setenv("JOB_COMPLETION_INDEX", "7")
	dir := t.TempDir()
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"sweep", "--shard", "1/3"}, exitUsage, "kvsim: sweep: --shard 1/3 needs --output-dir DIR (the shard writes DIR/shard-1-of-3.json)"},
		{[]string{"sweep", "--shard", "3/3", "--output-dir", dir}, exitUsage, `kvsim: sweep: --shard 3/3: K must be an integer from 0 to 2, got "3"`},
		{[]string{"sweep", "--shard", "auto/3", "--output-dir", dir}, exitUsage, `kvsim: sweep: --shard auto/3: JOB_COMPLETION_INDEX must be an integer from 0 to 2, got "7"`},
		{[]string{"sweep", "merge"}, exitUsage, "kvsim: sweep merge: give the directories"},
		{[]string{"sweep", "merge", dir}, exitError, "no shard files (shard-K-of-N.json, written by kvsim sweep --shard K/N)"},
	} {
		_, errs, code := cli(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.stderr) {
			t.Errorf("kvsim %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, errs, c.code, c.stderr)
		}
	}
	os.Unsetenv("JOB_COMPLETION_INDEX")
	if _, errs, code := cli(t, "sweep", "--shard", "auto/3", "--output-dir", dir); code != exitUsage || !strings.Contains(errs, "JOB_COMPLETION_INDEX is not set") {
		t.Errorf("auto/3 without the index: exit %d, stderr %q", code, errs)
	}
}
