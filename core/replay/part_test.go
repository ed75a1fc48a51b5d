package replay

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestPartsMergeToTheWholeRun: a run split into parts that each run
// alone, as the page's Web Workers run them (Job.Part), and merged from
// their encoded results (Merge, parts given last first) gives the
// prediction.json and requests.jsonl of one engine byte for byte, for
// every split from two parts to one per worker, over the random worlds of
// TestShardedRunsChangeNothing; a split a part saw held back says so
// (ErrHeldBack) instead of a report.
func TestPartsMergeToTheWholeRun(t *testing.T) {
	splits, heldBack := 0, 0
	for seed := uint64(1); seed <= 120; seed++ {
		job := shardJob(seed)
		job.Capture.Requests = true
		whole := job
		whole.NoShard = true
		one, err := Run(whole)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		n, err := Parts(job)
		if err != nil || n < 2 {
			t.Fatalf("seed %d: %d parts, %v", seed, n, err)
		}
		for k := 2; k <= n; k++ {
			var parts [][]byte
			for i := range k {
				pj := job
				pj.Part, pj.Check = Part{Of: k, Index: i}, true
				out, err := Run(pj)
				if err != nil {
					t.Fatalf("seed %d, part %d of %d: %v", seed, i, k, err)
				}
				if out.Prediction != nil || out.Requests != nil || len(out.Part) == 0 {
					t.Fatalf("seed %d, part %d of %d: a part's output has a report or no part", seed, i, k)
				}
				parts = append(parts, out.Part)
			}
			slices.Reverse(parts)
			merged, err := Merge(job, parts)
			if errors.Is(err, ErrHeldBack) {
				heldBack++
				continue
			}
			if err != nil {
				t.Fatalf("seed %d, %d parts: %v", seed, k, err)
			}
			splits++
			if p, r := bytes.Equal(merged.Prediction, one.Prediction), bytes.Equal(merged.Requests, one.Requests); !p || !r {
				t.Errorf("seed %d, %d parts: prediction.json the same %v, requests.jsonl the same %v", seed, k, p, r)
			}
			if merged.Stats.Passes != one.Stats.Passes || merged.RankPasses != one.RankPasses || merged.Engines != k {
				t.Errorf("seed %d, %d parts: %d passes (%d on the longest rank, %d engines); one engine %d (%d)", seed, k,
					merged.Stats.Passes, merged.RankPasses, merged.Engines, one.Stats.Passes, one.RankPasses)
			}
		}
	}
	t.Logf("%d splits merged, %d held back", splits, heldBack)
	if splits < 100 || heldBack == 0 {
		t.Errorf("%d splits merged, %d held back: the comparison misses a case", splits, heldBack)
	}
}

// TestMergeRefusesBadParts: parts that are missing, repeated, of another
// split or not parts at all are refused with an error, never merged into
// a wrong report or a panic; a job that keeps a per-pass record is not
// split.
func TestMergeRefusesBadParts(t *testing.T) {
	job := shardJob(1)
	var parts [][]byte
	for i := range 2 {
		pj := job
		pj.Part = Part{Of: 2, Index: i}
		out, err := Run(pj)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, out.Part)
	}
	for name, bad := range map[string][][]byte{
		"none":       nil,
		"one of two": parts[:1],
		"repeated":   {parts[0], parts[0]},
		"three":      {parts[0], parts[1], parts[1]},
		"garbage":    {parts[0], []byte("not a part")},
		"cut short":  {parts[0], parts[1][:len(parts[1])/2]},
		"empty":      {parts[0], {}},
	} {
		if _, err := Merge(job, bad); err == nil {
			t.Errorf("%s: merged", name)
		} else if e := AsError(err); e.Kind != KindInternal {
			t.Errorf("%s: %v (kind %s)", name, err, e.Kind)
		}
	}
	rec := job
	rec.Capture.Passes = true
	if n, err := Parts(rec); n != 1 || err != nil {
		t.Errorf("a job with a per-pass record: %d parts, %v", n, err)
	}
	rec.Part = Part{Of: 2}
	if _, err := Run(rec); err == nil {
		t.Error("a part with a per-pass record ran")
	}
}

// TestPartsMooncake (opt-in, KVSIM_MOONCAKE): the Mooncake conversation
// run in two parts, merged, gives one engine's reports, without G2 and
// with a 200,000-block SimpleCPU tier.
func TestPartsMooncake(t *testing.T) {
	_, dir, data, open := mooncakeCase(t)
	for _, sets := range [][]string{nil, {"engine.workers.aggregated.kv_cache.host_offload={num_host_blocks: 200000, connector: simple_cpu_v0_32}"}} {
		job := Job{Name: "conversation.yaml", Dir: dir, Config: data, Sets: sets, Traces: Traces{Files: open},
			Capture: Capture{Requests: true}, Workloads: NewWorkloads()}
		whole := job
		whole.NoShard = true
		t0 := time.Now()
		one, err := Run(whole)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v: whole run %v", sets, time.Since(t0))
		var parts [][]byte
		for i := range 2 {
			pj := job
			pj.Part = Part{Of: 2, Index: i}
			t0 := time.Now()
			out, err := Run(pj)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%v: part %d: %v, %d bytes", sets, i, time.Since(t0), len(out.Part))
			parts = append(parts, out.Part)
		}
		t0 = time.Now()
		merged, err := Merge(job, parts)
		t.Logf("%v: merged in %v", sets, time.Since(t0))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(one.Requests, merged.Requests) || !bytes.Equal(one.Prediction, merged.Prediction) {
			t.Errorf("%v: the reports differ merged from two parts", sets)
		}
	}
}
