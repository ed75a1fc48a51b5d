package main

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/replay/replaytest"
	"github.com/kvsim/kvsim/traces"
)

// TestOversizedJobsAreRefused: predict refuses replaytest.Oversized before running, with
// core/replay's message after "kvsim: ", and exit status 1.
func TestOversizedJobsAreRefused(t *testing.T) {
	data, err := traces.Read("connectors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const path = "../../traces/connectors.yaml"
	for name, sets := range replaytest.Oversized {
		t.Run(name, func(t *testing.T) {
			want := replay.Check(replay.Job{Name: path, Config: data, Sets: sets})
			if want == nil {
				t.Fatal("replay.Check accepts the job")
			}
			args := []string{"predict", "--config", path}
			for _, s := range sets {
				args = append(args, "--set", s)
			}
			stdout, stderr, code := cli(t, args...)
			if code != exitError || stdout != "" || stderr != "kvsim: "+want.Error()+"\n" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1 and %q", code, stdout, stderr, "kvsim: "+want.Error())
			}
			if strings.Contains(stderr, "goroutine") {
				t.Error("a stack trace")
			}
		})
	}
}
