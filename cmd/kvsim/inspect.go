package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kvsim/kvsim/core/record"
)

const inspectHelp = `usage: kvsim inspect --output-dir DIR --pass N [--worker W] [--rank R]

Print the G1 and G2 maps of one pass of one DP rank from DIR/passes.jsonl
(written by 'kvsim predict --capture-passes'): one character per G1 slot
with a legend, the next eviction victims, the G2 entries in eviction order,
then the events of that pass.
`

func runInspect(e *env, args []string) error {
	fs := newFlagSet("inspect")
	dir := fs.String("output-dir", "", "directory holding passes.jsonl")
	pass := fs.Int("pass", 0, "pass number (from 1)")
	worker := fs.Int("worker", 0, "worker index")
	rank := fs.Int("rank", 0, "DP rank")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" || *pass < 1 {
		return usagef("inspect: --output-dir and --pass (≥ 1) are required (see 'kvsim inspect -h')")
	}
	rec, err := readPasses(*dir)
	if err != nil {
		return err
	}
	ri := rec.RankIndex(*worker, *rank)
	if ri < 0 {
		return fmt.Errorf("%s: no worker %d rank %d in the record", filepath.Join(*dir, "passes.jsonl"), *worker, *rank)
	}
	return rec.Inspect(e.stdout, ri, *pass)
}

// readPasses decodes DIR/passes.jsonl.
func readPasses(dir string) (*record.Record, error) {
	f, err := os.Open(filepath.Join(dir, "passes.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("%v (run 'kvsim predict --capture-passes --output-dir %s' first)", err, dir)
	}
	defer f.Close()
	return record.Decode(f)
}
