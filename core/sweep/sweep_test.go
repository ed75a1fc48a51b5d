package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/traces"
)

func example(t testing.TB, name string, sets []string, vary ...string) Spec {
	t.Helper()
	data, err := traces.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	return Spec{Name: name, Dir: ".", Data: data, Sets: sets, Vary: vary}
}

func mustPlan(t testing.TB, spec Spec) *Plan {
	t.Helper()
	p, err := NewPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustRun(t testing.TB, p *Plan, opts Options) *Result {
	t.Helper()
	r, err := p.Run(builtin, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// single runs the §A (docs/model/cases.md) example once with full --set paths, as
// core/replay's acceptance test does, without the sweep package.
func single(t testing.TB, sets []string) *replay.Result {
	t.Helper()
	data, _ := traces.Read("connectors.yaml")
	cfg, err := config.Parse("connectors.yaml", ".", data, sets)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := replay.Workload(cfg, traces.Open)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.RunWith(cfg, wl, engine.Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

const hostOffload = "engine.workers.aggregated.kv_cache.host_offload"

// TestAcceptanceRowsInDefaultSweep: the §A rows at 2,048 and 192 blocks are
// points of the default sweep, with the published numbers and the same
// summary bytes as a single run; the no-tier row is a one-point sweep.
func TestAcceptanceRowsInDefaultSweep(t *testing.T) {
	p := mustPlan(t, example(t, DefaultConfig, nil, DefaultVary...))
	if p.Len() != 24 {
		t.Fatalf("default sweep has %d points; want 24", p.Len())
	}
	res := mustRun(t, p, Options{Check: true})
	rows := []struct {
		blocks               string
		connector            string
		restored, recomputed string
	}{
		{"2048", "offloading_v0_24", "14144", "6544"},
		{"2048", "offloading_v0_32", "14144", "6544"},
		{"2048", "simple_cpu_v0_32", "15568", "5248"},
		{"192", "offloading_v0_24", "11488", "8800"},
		{"192", "offloading_v0_32", "14144", "6544"},
		{"192", "simple_cpu_v0_32", "12432", "8368"},
	}
	for _, row := range rows {
		i := -1
		for j := range res.Rows {
			if v := p.Values(j); v[0] == row.blocks && v[1] == row.connector {
				i = j
			}
		}
		if i < 0 {
			t.Fatalf("no point %s × %s", row.blocks, row.connector)
		}
		got := res.Rows[i]
		if got[ColumnRestored] != row.restored || got[ColumnRecomputed] != row.recomputed {
			t.Errorf("%s: restored %s recomputed %s; want %s and %s", p.Label(i),
				got[ColumnRestored], got[ColumnRecomputed], row.restored, row.recomputed)
		}
		one := single(t, []string{hostOffload + ".num_host_blocks=" + row.blocks, hostOffload + ".connector=" + row.connector})
		if !bytes.Equal(res.Summaries[i], one.SummaryJSON()) {
			t.Errorf("%s: summary differs from a single run:\n%s\n%s", p.Label(i), res.Summaries[i], one.SummaryJSON())
		}
		var sum int64
		for _, r := range one.Records {
			sum += int64(r.FirstHost)
		}
		if fmt.Sprint(sum) != row.restored {
			t.Errorf("%s: single run restores %d over requests.jsonl", p.Label(i), sum)
		}
	}

	none := mustRun(t, mustPlan(t, example(t, DefaultConfig, nil, "host_offload=null")), Options{Check: true})
	if got := none.Rows[0][ColumnRecomputed]; got != "20320" {
		t.Errorf("no CPU tier: recomputed %s; want 20320", got)
	}
	if _, ok := none.Rows[0][ColumnRestored]; ok {
		t.Errorf("no CPU tier: the summary has %s", ColumnRestored)
	}
	if one := single(t, []string{hostOffload + "=null"}); !bytes.Equal(none.Summaries[0], one.SummaryJSON()) {
		t.Errorf("no CPU tier: summary differs from a single run")
	}
}

// TestParallelIdentical: 1 and 4 workers give byte-identical CSV and JSON.
func TestParallelIdentical(t *testing.T) {
	p := mustPlan(t, example(t, DefaultConfig, nil, DefaultVary...))
	a := mustRun(t, p, Options{Parallel: 1})
	var calls []int
	b := mustRun(t, p, Options{Parallel: 4, Progress: func(done, total int) {
		if total != 24 {
			t.Errorf("progress total %d", total)
		}
		calls = append(calls, done)
	}})
	if !bytes.Equal(a.CSV(), b.CSV()) {
		t.Error("sweep.csv differs between 1 and 4 workers")
	}
	if !bytes.Equal(a.JSON(), b.JSON()) {
		t.Error("sweep.json differs between 1 and 4 workers")
	}
	if len(calls) != 24 || calls[23] != 24 {
		t.Errorf("progress calls %v", calls)
	}
}

// TestEvaluateCollect is the browser's path: points evaluated one at a
// time, out of order, then collected, give the same bytes as Run (which
// shares workloads between points; the block size and the concurrency
// change the workload's key, the G2 keys do not).
func TestEvaluateCollect(t *testing.T) {
	p := mustPlan(t, example(t, DefaultConfig, nil, "kv_cache.block_size=16,32", "traffic.load.concurrency=2,4",
		"connector=offloading_v0_24,simple_cpu_v0_32", "num_host_blocks=128,2048"))
	want := mustRun(t, p, Options{Parallel: 3})
	sums := make([][]byte, p.Len())
	for i := p.Len() - 1; i >= 0; i-- {
		s, err := p.Evaluate(i, builtin, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sums[i] = s
	}
	got, err := Collect(p, sums)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.CSV(), want.CSV()) || !bytes.Equal(got.JSON(), want.JSON()) {
		t.Error("Evaluate + Collect differs from Run")
	}
	if _, err := Collect(p, sums[:1]); err == nil {
		t.Error("Collect accepted too few summaries")
	}
	if _, err := p.Evaluate(16, builtin, Options{}); err == nil {
		t.Error("Evaluate accepted point 16 of 16")
	}
	if a, b := want.Rows[0][ColumnRecomputed], want.Rows[8][ColumnRecomputed]; a == b {
		t.Errorf("block sizes 16 and 32 give the same recomputed tokens %s", a)
	}
}

// TestPointOrder: the first --vary varies slowest; shorthands resolve to
// the aggregated role.
func TestPointOrder(t *testing.T) {
	p := mustPlan(t, example(t, DefaultConfig, nil, "host_offload.num_host_blocks=64,128", "connector=offloading_v0_24,offloading_v0_32,simple_cpu_v0_32"))
	var got []string
	for i := range p.Len() {
		got = append(got, strings.Join(p.Values(i), "/"))
	}
	want := []string{"64/offloading_v0_24", "64/offloading_v0_32", "64/simple_cpu_v0_32",
		"128/offloading_v0_24", "128/offloading_v0_32", "128/simple_cpu_v0_32"}
	if !slices.Equal(got, want) {
		t.Errorf("points %v; want %v", got, want)
	}
	if want := []string{hostOffload + ".num_host_blocks=128", hostOffload + ".connector=offloading_v0_32"}; !slices.Equal(p.Overrides(4), want) {
		t.Errorf("overrides %v; want %v", p.Overrides(4), want)
	}
	if p.Label(4) != "point 4 (host_offload.num_host_blocks=128, connector=offloading_v0_32)" {
		t.Errorf("label %q", p.Label(4))
	}
}

// TestPathRules: full paths, role-relative paths and shorthands.
func TestPathRules(t *testing.T) {
	// A disaggregated config with G2 on the decode role only, to see which
	// roles a shorthand reaches.
	pd := []byte(`traffic:
  source: {type: synthetic, input_tokens: 64, output_tokens: 4}
  load: {type: concurrency, concurrency: 2}
  stop: {requests: 4}
engine:
  mode: disaggregated
  model: m
  hardware: h
  workers:
    prefill:
      kv_cache: {block_size: 16, capacity: {blocks: 64}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
    decode:
      kv_cache: {block_size: 16, bytes_per_token: 100, capacity: {blocks: 64}, host_offload: {num_host_blocks: 32}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
`)
	agg := example(t, DefaultConfig, nil).Data
	for _, c := range []struct {
		data []byte
		path string
		want []string
	}{
		{agg, "engine.workers.aggregated.kv_cache.host_offload.num_host_blocks", []string{hostOffload + ".num_host_blocks"}},
		{agg, "traffic.load.concurrency", []string{"traffic.load.concurrency"}},
		{agg, "host_offload.num_host_blocks", []string{hostOffload + ".num_host_blocks"}},
		{agg, "kv_cache.host_offload.num_host_blocks", []string{hostOffload + ".num_host_blocks"}},
		{agg, "num_host_blocks", []string{hostOffload + ".num_host_blocks"}},
		{agg, "connector=offloading_v0_24,offloading_v0_32", []string{hostOffload + ".connector"}},
		{agg, "scheduler.max_sequences", []string{"engine.workers.aggregated.scheduler.max_sequences"}},
		{pd, "host_offload.num_host_blocks", []string{"engine.workers.decode.kv_cache.host_offload.num_host_blocks"}},
		{pd, "kv_cache.block_size", []string{"engine.workers.prefill.kv_cache.block_size", "engine.workers.decode.kv_cache.block_size"}},
	} {
		arg := c.path
		if !strings.Contains(arg, "=") {
			arg += "=16,32"
		}
		p, err := NewPlan(Spec{Name: "x.yaml", Data: c.data, Vary: []string{arg}})
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if !slices.Equal(p.Axes[0].Targets, c.want) {
			t.Errorf("%s: targets %v; want %v", c.path, p.Axes[0].Targets, c.want)
		}
	}
}

// TestVaryErrors: bad --vary input gets a clear error, checked before any
// point runs.
func TestVaryErrors(t *testing.T) {
	H := hostOffload
	for _, c := range []struct {
		name string
		sets []string
		vary []string
		want string
	}{
		{"no vary", nil, nil,
			"--vary: give at least one --vary PATH=VALUE,VALUE,…"},
		{"no equals", nil, []string{"connector"},
			"--vary connector: expected PATH=VALUE,VALUE,…"},
		{"empty path", nil, []string{"=1,2"},
			"--vary =1,2: expected PATH=VALUE,VALUE,… with a nonempty PATH"},
		{"empty key", nil, []string{"host_offload..num_host_blocks=1"},
			`--vary host_offload..num_host_blocks=1: invalid path "host_offload..num_host_blocks": empty key`},
		{"bad character", nil, []string{"host_offload/num_host_blocks=1"},
			`--vary host_offload/num_host_blocks=1: invalid path "host_offload/num_host_blocks": '/' is not allowed in a key (use letters, digits, _ and -)`},
		{"empty list", nil, []string{"connector="},
			"--vary connector=: empty list of values: give at least one value after '='"},
		{"blank list", nil, []string{"connector= "},
			"--vary connector= : empty list of values: give at least one value after '='"},
		{"empty value", nil, []string{"num_host_blocks=64,,128"},
			"--vary num_host_blocks=64,,128: value 2 of 3 is empty"},
		{"trailing comma", nil, []string{"num_host_blocks=64,"},
			"--vary num_host_blocks=64,: value 2 of 2 is empty"},
		{"repeated value", nil, []string{"num_host_blocks=64,128,64"},
			`--vary num_host_blocks=64,128,64: value "64" is given twice (values 1 and 3)`},
		{"unbalanced", nil, []string{"host_offload={num_host_blocks: 64"},
			`--vary host_offload={num_host_blocks: 64: unclosed '{' in the values`},
		{"stray bracket", nil, []string{"num_host_blocks=64]"},
			`--vary num_host_blocks=64]: unbalanced ']' at offset 2 of the values`},
		{"unterminated quote", nil, []string{`connector="simple_cpu_v0_32`},
			`--vary connector="simple_cpu_v0_32: unterminated "-quoted value`},
		{"unknown first key", nil, []string{"num_host_blockz=1,2"},
			`--vary num_host_blockz=1,2: unknown path: a path starts with traffic or engine, with a key of a role (parallelism, scheduler, kv_cache, timing, startup_seconds), with host_offload or g3_offload, or is connector or num_host_blocks; got "num_host_blockz"`},
		{"unknown key below host_offload", nil, []string{"host_offload.num_host_blockz=1,2"},
			`--vary host_offload.num_host_blockz=1,2: ` + H + `.num_host_blockz: unknown key "num_host_blockz" (allowed: num_host_blocks, scope, d2h_bandwidth_gbps, h2d_bandwidth_gbps, latency_to_first_byte_ms, shared_d2h_bandwidth_gbps, shared_h2d_bandwidth_gbps, connector, kvcr)`},
		{"unknown full path", nil, []string{"traffic.load.concurency=1,2"},
			`--vary traffic.load.concurency=1,2: traffic.load.concurency: unknown key "concurency" (allowed: type, concurrency, requests_per_second, sessions_per_second, seed, speedup, agentic_lanes, agentic_snapshot, agentic_warmup, agentic_profile)`},
		{"unknown role key", nil, []string{"scheduler.max_seqs=1"},
			`--vary scheduler.max_seqs=1: engine.workers.aggregated.scheduler.max_seqs: unknown key "max_seqs" (allowed: max_batched_tokens, max_sequences)`},
		{"role absent in this mode", nil, []string{"engine.workers.prefill.scheduler.max_sequences=1,2"},
			`--vary engine.workers.prefill.scheduler.max_sequences=1,2: engine.workers.prefill: rejected in aggregated mode (prefill and decode roles need mode: disaggregated)`},
		{"wrong type", nil, []string{"host_offload.num_host_blocks=64,abc,128"},
			`--vary host_offload.num_host_blocks=64,abc,128: value "abc": ` + H + `.num_host_blocks: expected a positive integer, got string "abc"`},
		{"float for int", nil, []string{"num_host_blocks=64,1.5"},
			`--vary num_host_blocks=64,1.5: value "1.5": ` + H + `.num_host_blocks: expected a positive integer, got float 1.5`},
		{"not positive", nil, []string{"num_host_blocks=0,64"},
			`--vary num_host_blocks=0,64: value "0": ` + H + `.num_host_blocks: expected a positive integer, got 0`},
		{"bad enum", nil, []string{"connector=offloading_v0_24,lmcache"},
			`--vary connector=offloading_v0_24,lmcache: value "lmcache": ` + H + `.connector: expected one of offloading_v0_24, offloading_v0_32, simple_cpu_v0_32, got "lmcache"`},
		{"number for string", nil, []string{"connector=5"},
			`--vary connector=5: ` + H + `.connector: expected a string, got integer 5`},
		{"block mapping", nil, []string{"host_offload={num_host_blocks: 64, connector: nope}"},
			`--vary host_offload={num_host_blocks: 64, connector: nope}: ` + H + `.connector: expected one of offloading_v0_24, offloading_v0_32, simple_cpu_v0_32, got "nope"`},
		{"value fails against the file", nil, []string{"host_offload.scope=dp_rank_local,cluster_shared"},
			`--vary host_offload.scope=dp_rank_local,cluster_shared: value "cluster_shared": connectors.yaml:21:58: ` + H + `.connector: simple_cpu_v0_32 requires scope dp_rank_local`},
		{"duplicate path", nil, []string{"num_host_blocks=64,128", "host_offload.num_host_blocks=256"},
			`--vary host_offload.num_host_blocks=256: ` + H + `.num_host_blocks is already varied by --vary num_host_blocks`},
		{"duplicate full path", nil, []string{"connector=offloading_v0_24", H + ".connector=offloading_v0_32"},
			`--vary ` + H + `.connector=offloading_v0_32: ` + H + `.connector is already varied by --vary connector`},
		{"overlapping paths", nil, []string{"connector=offloading_v0_24", "host_offload=null"},
			`--vary host_offload=null: ` + H + ` overlaps ` + H + `.connector, varied by --vary connector`},
		{"combination", []string{H + ".connector=offloading_v0_24"}, []string{"host_offload.scope=dp_rank_local,cluster_shared", "connector=offloading_v0_24,simple_cpu_v0_32"},
			`point 3 (host_offload.scope=cluster_shared, connector=simple_cpu_v0_32): --vary connector=simple_cpu_v0_32: ` + H + `.connector: simple_cpu_v0_32 requires scope dp_rank_local`},
		{"bad --set", []string{H + ".nope=1"}, []string{"connector=offloading_v0_24"},
			`--set ` + H + `.nope=1: ` + H + `.nope: unknown key "nope" (allowed: num_host_blocks, scope, d2h_bandwidth_gbps, h2d_bandwidth_gbps, latency_to_first_byte_ms, shared_d2h_bandwidth_gbps, shared_h2d_bandwidth_gbps, connector, kvcr)`},
		{"shorthand without G2", []string{H + "=null"}, []string{"connector=offloading_v0_24"},
			`--vary connector=offloading_v0_24: ` + H + `.num_host_blocks: missing required key`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewPlan(example(t, DefaultConfig, c.sets, c.vary...))
			if err == nil {
				t.Fatalf("no error; want %s", c.want)
			}
			if err.Error() != c.want {
				t.Errorf("error\n  %s\nwant\n  %s", err, c.want)
			}
		})
	}
}

// TestColumns: the CSV header is the axes then the summary keys in report
// order, also when only some points have the G2 keys; nested values are
// flattened.
func TestColumns(t *testing.T) {
	p := mustPlan(t, example(t, DefaultConfig, nil, "host_offload=null,{num_host_blocks: 192, connector: simple_cpu_v0_32}"))
	res := mustRun(t, p, Options{})
	rd := csv.NewReader(bytes.NewReader(res.CSV()))
	recs, err := rd.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d CSV records; want header + 2", len(recs))
	}
	var want []string
	dec := json.NewDecoder(bytes.NewReader(res.Summaries[1]))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		want = append(want, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	want = append([]string{"host_offload"}, want...)
	if !slices.Equal(recs[0], want) {
		t.Errorf("header\n %v\nwant\n %v", recs[0], want)
	}
	col := slices.Index(recs[0], ColumnRestored)
	if recs[1][col] != "" || recs[2][col] != "12432" {
		t.Errorf("restored cells %q, %q; want empty and 12432", recs[1][col], recs[2][col])
	}
	if recs[1][0] != "null" || recs[2][0] != "{num_host_blocks: 192, connector: simple_cpu_v0_32}" {
		t.Errorf("value cells %q %q", recs[1][0], recs[2][0])
	}

	// g2_domains, an array of objects, becomes g2_domains.0.capacity_blocks.
	g := mustRun(t, mustPlan(t, example(t, "g2-restore.yaml", nil, "host_offload.scope=dp_rank_local,cluster_shared")), Options{})
	if !slices.Contains(g.Columns, "g2_domains.0.capacity_blocks") {
		t.Errorf("columns lack g2_domains.0.capacity_blocks: %v", g.Columns)
	}
	if v := g.Rows[1]["g2_domains.0.capacity_blocks"]; v != "8" {
		t.Errorf("capacity_blocks %q; want 8", v)
	}
	var doc struct {
		Config string
		Vary   []struct {
			Path    string
			Targets []string
			Values  []any
		}
		Points []struct {
			Point   int
			Values  map[string]any
			Summary map[string]any
		}
	}
	if err := json.Unmarshal(g.JSON(), &doc); err != nil {
		t.Fatalf("sweep.json: %v\n%s", err, g.JSON())
	}
	if doc.Config != "g2-restore.yaml" || len(doc.Points) != 2 || doc.Points[1].Values["host_offload.scope"] != "cluster_shared" {
		t.Errorf("sweep.json %+v", doc)
	}
}

func TestMergeKeys(t *testing.T) {
	cols := mergeKeys(nil, []string{"a", "c", "e"})
	cols = mergeKeys(cols, []string{"a", "b", "c", "d", "e", "f"})
	cols = mergeKeys(cols, []string{"x", "a"})
	if want := []string{"x", "a", "b", "c", "d", "e", "f"}; !slices.Equal(cols, want) {
		t.Errorf("%v; want %v", cols, want)
	}
}

func TestJSONValue(t *testing.T) {
	for in, want := range map[string]string{"64": "64", "1.50": "1.5", "1e3": "1000", "null": "null", "true": "true",
		"abc": `"abc"`, "0x10": `"0x10"`, "+64": "64", "064": `"064"`, "0.5": "0.5", "-0": "0", "{a: 1}": `"{a: 1}"`, "inf": `"inf"`} {
		if got := string(jsonValue(in)); got != want {
			t.Errorf("jsonValue(%q) = %s; want %s", in, got, want)
		}
	}
}

func TestSeries(t *testing.T) {
	p := mustPlan(t, example(t, DefaultConfig, nil, "connector=offloading_v0_24,simple_cpu_v0_32", "num_host_blocks=2048,192"))
	if p.XAxis() != 1 {
		t.Fatalf("x axis %d; want 1", p.XAxis())
	}
	res := mustRun(t, p, Options{})
	s := res.Series(p.XAxis(), ColumnRestored)
	want := []Series{{"offloading_v0_24", []float64{192, 2048}, []float64{11488, 14144}},
		{"simple_cpu_v0_32", []float64{192, 2048}, []float64{12432, 15568}}}
	if fmt.Sprint(s) != fmt.Sprint(want) {
		t.Errorf("series %v; want %v", s, want)
	}
}

func TestFlatten(t *testing.T) {
	keys, row, err := flatten([]byte(`{"a": 1, "b": {"c": "x\"y", "d": [true, null, {"e": -1.5e-7}]}, "f": []}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b.c", "b.d.0", "b.d.1", "b.d.2.e"}; !slices.Equal(keys, want) {
		t.Errorf("keys %v; want %v", keys, want)
	}
	if row["b.c"] != `x"y` || row["b.d.0"] != "true" || row["b.d.1"] != "" || row["b.d.2.e"] != "-1.5e-7" {
		t.Errorf("row %v", row)
	}
	for _, bad := range []string{``, `[]`, `{"a": 1`, `{"a" 1}`, `{"a": 1,}`, `{"a": nope}`, `{"a": 1} x`, `{"a": "x}`} {
		if _, _, err := flatten([]byte(bad)); err == nil {
			t.Errorf("flatten(%q) accepted", bad)
		}
	}
}

// builtin serves the built-in example traces.
var builtin = replay.Traces{Builtin: true}

// TestRunPoints is a shard's path: the listed points in the order given,
// each with its summary or its error; a failing point does not stop the
// others, and the summaries are Run's.
func TestRunPoints(t *testing.T) {
	p := mustPlan(t, example(t, DefaultConfig, nil, "num_host_blocks=128,2048", "connector=offloading_v0_24,simple_cpu_v0_32"))
	want := mustRun(t, p, Options{})
	out := p.RunPoints([]int{3, 0, 2}, builtin, Options{Parallel: 2, Limits: replay.Limits{MaxG2Blocks: 1000}})
	if len(out) != 3 || out[0].Point != 3 || out[1].Point != 0 || out[2].Point != 2 {
		t.Fatalf("outcomes %+v", out)
	}
	if out[0].Err == nil || !strings.Contains(out[0].Err.Error(), "point 3 (num_host_blocks=2048, connector=simple_cpu_v0_32)") {
		t.Errorf("point 3 over the G2 limit: %v", out[0].Err)
	}
	if out[1].Err != nil || !bytes.Equal(out[1].Summary, want.Summaries[0]) {
		t.Errorf("point 0 after a failure: %v", out[1].Err)
	}
}
