package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/shard"
	"github.com/kvsim/kvsim/core/sweep"
)

// build names this kvsim build in shard files; the Dockerfile sets it
// with -ldflags "-X main.build=…". Empty: buildID derives it from the
// binary's build information.
var build string

// buildID is the build a shard file records: merge refuses shards of two
// builds, whose models may differ. Without a VCS revision, or with a
// modified tree, the binary's own hash is part of it.
func buildID() string {
	if build != "" {
		return build
	}
	id := "kvsim"
	if bi, ok := debug.ReadBuildInfo(); ok {
		id += " " + bi.Main.Version
		rev, modified := "", ""
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" {
			id += " " + rev[:min(len(rev), 12)]
		}
		if modified == "true" {
			id += "+modified"
		}
		if rev == "" || modified == "true" {
			id += exeHash()
		}
	}
	return id + " " + runtime.Version()
}

// exeHash is " exe:" and the start of the running binary's SHA-256, which
// tells two builds apart when no VCS revision does ("" when the binary
// cannot be read).
func exeHash() string {
	path, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return " exe:" + hex.EncodeToString(h.Sum(nil))[:12]
}

// parseShard reads --shard (nil when not given); K of auto/N comes from
// $JOB_COMPLETION_INDEX. A shard needs --output-dir.
func parseShard(arg, outDir string) (*shard.Shard, error) {
	if arg == "" {
		return nil, nil
	}
	index, set := os.LookupEnv(shard.IndexVar)
	s, err := shard.Parse(arg, index, set)
	if err != nil {
		return nil, usagef("sweep: %v", err)
	}
	if outDir == "" {
		return nil, usagef("sweep: --shard %s needs --output-dir DIR (the shard writes DIR/%s)", arg, s.FileName())
	}
	return &s, nil
}

// runShard is `kvsim sweep --shard K/N`: it runs the shard's points and
// writes DIR/shard-K-of-N.json atomically (a shared volume never shows a
// half-written file). When that file already holds this shard, done by
// this build, it runs nothing: re-running a whole Job runs only the
// shards that are missing or failed. Failed points are recorded in the file, listed on
// stderr, and make the exit status 1.
func runShard(e *env, p *sweep.Plan, traces replay.Traces, s shard.Shard, dir string, parallel int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	start := time.Now()
	wls := replay.NewWorkloads()
	f, costs, err := shard.Prepare(p, s, buildID(), traces, wls)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, s.FileName())
	if data, err := os.ReadFile(path); err == nil {
		if old, err := shard.Decode(path, data); err == nil && f.Done(old) {
			fmt.Fprintf(e.stdout, "shard %s: %s is already done (this build, this sweep, every point); nothing to run\n", s, path)
			return nil
		}
	}
	bar := &sweepBar{w: e.stderr, on: e.tty, start: start}
	f.Evaluate(p, costs, traces, sweep.Options{Parallel: parallel, Progress: bar.update, Workloads: wls})
	bar.finish()
	var cost int64
	for _, pt := range f.Points {
		cost += pt.Cost
	}
	fmt.Fprintf(e.stderr, "kvsim: shard %s: %d of %d points in %.2fs, %d at a time\n", s, len(f.Points), p.Len(),
		time.Since(start).Seconds(), min(parallel, max(len(f.Points), 1)))
	if err := writeAtomic(path, f.Encode()); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "shard %s: %d points: %s (estimated cost %d)\nwrote %s\n", s, len(f.Points), pointList(f), cost, path)
	if failed := f.Failed(); len(failed) > 0 {
		for _, pt := range failed {
			fmt.Fprintf(e.stderr, "kvsim: %s\n", pt.Error)
		}
		return fmt.Errorf("shard %s: %d of %d points failed (listed above; %s records them)", s, len(failed), len(f.Points), path)
	}
	return nil
}

// pointList is "0, 5, 9" (the shard's points, the first 16 of them), or
// "none".
func pointList(f *shard.File) string {
	if len(f.Points) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, pt := range f.Points {
		if i == 16 {
			fmt.Fprintf(&b, ", … (%d more)", len(f.Points)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, pt.Point)
	}
	return b.String()
}

// writeAtomic writes data to path through a temporary file in the same
// directory and a rename.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// runSweepMerge is `kvsim sweep merge DIR…`.
func runSweepMerge(e *env, args []string) error {
	fs := newFlagSet("sweep merge")
	outDir := fs.String("output-dir", "", "")
	overwrite := fs.Bool("overwrite", false, "")
	xPath := fs.String("x", "", "")
	if err := parseFlagsArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("sweep merge: give the directories (or files) that hold the shard files (see 'kvsim sweep -h')")
	}
	files, err := readShards(fs.Args())
	if err != nil {
		return err
	}
	res, err := shard.Merge(files)
	if err != nil {
		return err
	}
	x, err := plotAxis(res.Plan, *xPath)
	if err != nil {
		return err
	}
	out := *outDir
	if out == "" {
		out = fs.Arg(0)
		if st, err := os.Stat(out); err == nil && !st.IsDir() {
			out = filepath.Dir(out)
		}
	}
	if err := checkMergeDir(out, *overwrite); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "kvsim: merged %d shard files of %d points\n", len(files), res.Plan.Len())
	sweepTable(e.stdout, res)
	names, err := writeSweep(out, res, x)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\nwrote %s\n", strings.Join(names, " "))
	if x < 0 {
		fmt.Fprintln(e.stdout, "no plots: no --vary has only numeric values")
	}
	return nil
}

// readShards reads the shard files in each directory of args (or the file
// args names), in name order.
func readShards(args []string) ([]shard.Named, error) {
	var out []shard.Named
	for _, a := range args {
		paths := []string{a}
		if st, err := os.Stat(a); err != nil {
			return nil, err
		} else if st.IsDir() {
			paths, _ = filepath.Glob(filepath.Join(a, "shard-*-of-*.json"))
			if len(paths) == 0 {
				return nil, fmt.Errorf("%s: no shard files (shard-K-of-N.json, written by kvsim sweep --shard K/N)", a)
			}
			slices.Sort(paths)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			f, err := shard.Decode(p, data)
			if err != nil {
				return nil, err
			}
			out = append(out, shard.Named{Name: p, File: f})
		}
	}
	return out, nil
}

// checkMergeDir refuses to replace a sweep's files in dir without
// --overwrite (the directory may hold the shard files themselves).
func checkMergeDir(dir string, overwrite bool) error {
	if overwrite {
		return nil
	}
	for _, name := range sweepOutputs {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("%s already holds %s (add --overwrite to replace the sweep's files)", dir, name)
		}
	}
	return nil
}
