package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/replay/replaytest"
)

// TestBuiltBinary builds kvsim into a temporary directory and runs it as
// a user does: --version prints one line; the jobs of replaytest.Oversized
// (10^9 synthetic sessions among them, which once ended in "fatal error:
// runtime: out of memory", a stack dump and exit 2) exit 1 with one
// "kvsim: " line and no stack trace.
func TestBuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "kvsim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	kvsim := func(args ...string) (stdout, stderr string, code int) {
		var o, e bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var x *exec.ExitError
		if errors.As(err, &x) {
			code = x.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}
	out, _, code := kvsim("--version")
	if code != 0 || !strings.HasPrefix(out, "kvsim ") || strings.Count(out, "\n") != 1 {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	for name, sets := range replaytest.Oversized {
		args := []string{"predict", "--config", "../../traces/connectors.yaml"}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		out, errs, code := kvsim(args...)
		if code != exitError || out != "" || !strings.HasPrefix(errs, "kvsim: ") || strings.Count(errs, "\n") != 1 ||
			strings.Contains(errs, "goroutine") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and one kvsim: line", name, code, out, errs)
		}
	}
}
