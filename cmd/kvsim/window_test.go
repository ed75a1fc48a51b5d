package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCaptureWindow: --capture-window writes a base line then the lines of
// the whole record's passes 300 to 500, byte for byte; inspect reads a
// pass of the window as it reads the whole record, and refuses one before
// it; diff compares two windowed records.
func TestCaptureWindow(t *testing.T) {
	sets := connectorSets(192, "offloading_v0_24")
	full, win := t.TempDir(), t.TempDir()
	for _, c := range []struct {
		out   string
		extra []string
	}{{full, []string{"--capture-passes"}}, {win, []string{"--capture-window", "300:500"}}} {
		if _, stderr, code := cli(t, predictArgs("connectors.yaml", c.out, sets, c.extra...)...); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	fullLines := bytes.Split(bytes.TrimSuffix(readFile(t, filepath.Join(full, passesFile)), []byte("\n")), []byte("\n"))
	winLines := bytes.Split(bytes.TrimSuffix(readFile(t, filepath.Join(win, passesFile)), []byte("\n")), []byte("\n"))
	var base struct {
		Base   bool
		Window string
		Pass   int
	}
	if err := json.Unmarshal(winLines[0], &base); err != nil || !base.Base || base.Window != "300:500" || base.Pass != 299 {
		t.Fatalf("first line is not the base line of window 300:500 after pass 299: %+v, %v", base, err)
	}
	if len(fullLines) < 500 || len(winLines) != 1+201 {
		t.Fatalf("%d lines in the whole record, %d in the window; want at least 500 and 202", len(fullLines), len(winLines))
	}
	for i := range 201 {
		if !bytes.Equal(winLines[1+i], fullLines[299+i]) {
			t.Fatalf("pass %d: the windowed line differs from the whole record's:\n%s\nwant\n%s", 300+i, winLines[1+i], fullLines[299+i])
		}
	}
	for _, pass := range []string{"300", "421", "500"} {
		a, _, _ := cli(t, "inspect", "--output-dir", full, "--pass", pass)
		b, stderr, code := cli(t, "inspect", "--output-dir", win, "--pass", pass)
		if code != exitOK || a != b {
			t.Errorf("inspect --pass %s of the window: exit %d %s\n%s\nwant\n%s", pass, code, stderr, b, a)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"inspect", "--output-dir", win, "--pass", "12"}, exitError, "pass 12 is before the window this record keeps (--capture-window 300:500: passes 300 to 500)"},
		{[]string{"diff", win, win}, exitOK, "no divergence"},
		{[]string{"diff", win, full}, exitError, "start at different passes"},
		{predictArgs("connectors.yaml", t.TempDir(), nil, "--capture-window", "5:4"), exitUsage, `--capture-window: window "5:4": it ends before it starts`},
		{predictArgs("connectors.yaml", t.TempDir(), nil, "--capture-window", "2s"), exitUsage, "want A:B with pass numbers"},
		{[]string{"predict", "--capture-window", "1:2"}, exitUsage, "--capture-window need --output-dir"},
		{predictArgs("connectors.yaml", t.TempDir(), nil, "--capture-window", "90s:"), exitError, "the capture window 90s: holds no pass of the run"},
	} {
		stdout, stderr, code := cli(t, tc.args...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("kvsim %v: exit %d, output %q; want exit %d containing %q", tc.args, code, stdout+stderr, tc.code, tc.want)
		}
	}
}

// TestCaptureRefusedWhenLarge: a whole record estimated over 2 GiB (§A's (docs/model/cases.md)
// 1,938 passes with a 200,000-block G2: about 3.1 MiB a line) is refused
// before anything is written, with the estimate and the ways out; a window
// or --capture-large runs it.
func TestCaptureRefusedWhenLarge(t *testing.T) {
	sets := connectorSets(200_000, "offloading_v0_24")
	out := t.TempDir()
	_, stderr, code := cli(t, predictArgs("connectors.yaml", out, sets, "--capture-passes")...)
	want := "the per-pass record of this run would be about 5.8 GiB (1,938 passes, about 3.1 MiB a line), more than the limit of 2.0 GiB; " +
		"capture a window instead (--capture-window 1000:2000, or 120s:130s), or add --capture-large to write it all"
	if code != exitError || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr %q; want exit %d containing %q", code, stderr, exitError, want)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("the refused run wrote %d files", len(entries))
	}
	for _, extra := range [][]string{{"--capture-window", "1:100"}, {"--capture-passes", "--capture-large"}} {
		if _, stderr, code := cli(t, predictArgs("connectors.yaml", t.TempDir(), sets, extra...)...); code != exitOK {
			t.Errorf("%v: exit %d: %s", extra, code, stderr)
		}
	}
}
