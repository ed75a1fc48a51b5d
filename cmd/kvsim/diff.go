package main

import (
	"path/filepath"

	"github.com/kvsim/kvsim/core/record"
)

var recordDiff = record.Diff

const diffHelp = `usage: kvsim diff [--worker W] [--rank R] [--limit N] DIR_A DIR_B

Compare two per-pass records of the same trace (for example two connector
profiles): print the first pass whose G1 or G2 blocks differ, then per pass
the blocks one run evicted that the other kept, and the restores from G2
that only one run made (with their tokens).
`

func runDiff(e *env, args []string) error {
	fs := newFlagSet("diff")
	worker := fs.Int("worker", 0, "worker index")
	rank := fs.Int("rank", 0, "DP rank")
	limit := fs.Int("limit", 20, "passes to list (0: all)")
	if err := parseFlagsArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("diff: want two output directories (see 'kvsim diff -h')")
	}
	a, err := readPasses(fs.Arg(0))
	if err != nil {
		return err
	}
	b, err := readPasses(fs.Arg(1))
	if err != nil {
		return err
	}
	ri := a.RankIndex(*worker, *rank)
	if ri < 0 {
		return usagef("diff: no worker %d rank %d in %s", *worker, *rank, fs.Arg(0))
	}
	d, err := recordDiff(a, b, ri)
	if err != nil {
		return err
	}
	d.Write(e.stdout, filepath.Base(fs.Arg(0)), filepath.Base(fs.Arg(1)), *limit)
	return nil
}
