package state

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/wasm/proto"
)

func mustParse(t *testing.T, text string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("c.yaml", "", []byte(text), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return cfg
}

// TestFormEditsRoundTrip: each control edit shows up in the form read back
// from the edited YAML (form → YAML → form).
func TestFormEditsRoundTrip(t *testing.T) {
	text := ExampleByID("A192").YAML()
	cfg := mustParse(t, text)
	f := FormOf(cfg)
	if f.Connector != "simple_cpu_v0_32" || f.G2 != 192 || !f.HasG2 || f.G1 != 128 || f.BlockSize != 16 ||
		f.MaxSeqs != 2 || f.Budget != 2048 || f.PrefillMs != 2 || f.DecodeMs != 1 || f.D2H != 32 ||
		f.Source.Path != "delta-sessions.jsonl" || f.Source.Concurrency != 4 {
		t.Fatalf("form of A192: %+v", f)
	}
	steps := []struct {
		field Field
		input string
		check func(Form) bool
	}{
		{FConnector, "offloading_v0_32", func(f Form) bool { return f.Connector == "offloading_v0_32" }},
		{FG2, "2,048", func(f Form) bool { return f.G2 == 2048 }},
		{FG1, "256", func(f Form) bool { return f.G1 == 256 }},
		{FBlockSize, "32", func(f Form) bool { return f.BlockSize == 32 }},
		{FReplicas, "2", func(f Form) bool { return f.Replicas == 2 }},
		{FAttnDP, "2", func(f Form) bool { return f.AttnDP == 2 }},
		{FMaxSeqs, "4", func(f Form) bool { return f.MaxSeqs == 4 }},
		{FBudget, "4096", func(f Form) bool { return f.Budget == 4096 }},
		{FPrefillMs, "2.5", func(f Form) bool { return f.PrefillMs == 2.5 }},
		{FDecodeMs, "0.75", func(f Form) bool { return f.DecodeMs == 0.75 }},
		{FD2H, "16", func(f Form) bool { return f.D2H == 16 }},
		{FH2D, "8", func(f Form) bool { return f.H2D == 8 }},
		{FConcurrency, "3", func(f Form) bool { return f.Source.Concurrency == 3 }},
		{FG2None, "true", func(f Form) bool { return !f.HasG2 }},
		{FG2None, "false", func(f Form) bool {
			return f.HasG2 && f.G2 == 2048 && f.Connector == "offloading_v0_32" && f.D2H == 16 && f.H2D == 8
		}},
	}
	last := f
	for _, s := range steps {
		next, err := Edit(text, cfg, last, s.field, s.input)
		if err != nil {
			t.Fatalf("%s=%s: %v", s.field, s.input, err)
		}
		cfg = mustParse(t, next)
		f = FormOf(cfg)
		if !s.check(f) {
			t.Fatalf("%s=%s: form %+v\n%s", s.field, s.input, f, next)
		}
		if f.HasG2 {
			last = f
		}
		text = next
	}
}

func TestEditRejectsBadInput(t *testing.T) {
	text := ExampleByID("A192").YAML()
	cfg := mustParse(t, text)
	for _, c := range []struct {
		field Field
		input string
	}{
		{FG1, "12.5"}, {FG1, "many"}, {FPrefillMs, "fast"}, {FConnector, "lmcache"}, {NoField, "1"}, {NumFields + 3, "1"}, {FGen, "1"},
		{FKVBandwidth, "fast"}, {FDecodeReplicas, "1.5"},
		{FG2, "1: 2"},
	} {
		if _, err := Edit(text, cfg, Form{}, c.field, c.input); err == nil {
			t.Errorf("%s=%q accepted", c.field, c.input)
		}
	}
	// a value the config rejects is written; the parser's message names the control
	next, err := Edit(text, cfg, Form{}, FG1, "0")
	if err != nil {
		t.Fatal(err)
	}
	_, perr := config.Parse("c.yaml", "", []byte(next), nil)
	ce, ok := perr.(*config.Error)
	if !ok || FieldOfPath(ce.Path) != FG1 {
		t.Fatalf("G1 0: %v (field %v)", perr, FieldOfPath(ce.Path))
	}
}

func TestFieldOfPath(t *testing.T) {
	for path, want := range map[string]Field{
		agg + ".kv_cache.capacity.blocks":                 FG1,
		agg + ".kv_cache.host_offload.num_host_blocks":    FG2,
		agg + ".kv_cache.host_offload.connector":          FConnector,
		agg + ".kv_cache.host_offload":                    FG2,
		agg + ".scheduler.max_sequences":                  FMaxSeqs,
		agg + ".scheduler.max_batched_tokens":             FBudget,
		agg + ".timing.prefill_ms":                        FPrefillMs,
		agg + ".kv_cache.host_offload.h2d_bandwidth_gbps": FH2D,
		"engine.mode":                                           FPD,
		"engine.workers.prefill":                                FPD,
		"engine.workers.decode":                                 FPD,
		"engine.workers.decode.parallelism.replicas":            FDecodeReplicas,
		"engine.workers.prefill.parallelism.replicas":           FReplicas,
		"engine.workers.decode.kv_cache.host_offload.connector": FConnector,
		"engine.kv_transfer.bandwidth_gb_per_second":            FKVBandwidth,
		"engine.kv_transfer.bytes_per_token":                    FKVBandwidth,
		"traffic.load.concurrency":                              FConcurrency,
		"traffic.source.paths":                                  FTrace,
		"engine.model":                                          FModel,
		"engine.model_config.torch_dtype":                       FModel,
		"engine.hardware":                                       FHardware,
		agg + ".timing.type":                                    FTiming,
		agg + ".timing.speedup_ratio":                           FSpeedup,
		agg + ".kv_cache.capacity.memory_fraction":              FMemFraction,
		"engine.backend":                                        NoField,
		"":                                                      NoField,
	} {
		if got := FieldOfPath(path); got != want {
			t.Errorf("FieldOfPath(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestTrafficPicker(t *testing.T) {
	text := ExampleByID("A192").YAML()
	next, err := UseBuiltin(text, "g2-restore.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	f := FormOf(mustParse(t, next))
	if f.Source.Path != "g2-restore.jsonl" || f.Source.Format != "mooncake" || f.Source.LoadType != "trace_timestamps" {
		t.Errorf("builtin: %+v", f.Source)
	}
	next, err = UseUpload(next, SafeName("C:\\tmp\\my trace.jsonl"), "mooncake-delta", 16, 4)
	if err != nil {
		t.Fatal(err)
	}
	f = FormOf(mustParse(t, next))
	if f.Source.Path != "my_trace.jsonl" || f.Source.Format != "mooncake-delta" || f.Source.TraceBlockSize != 16 {
		t.Errorf("upload: %+v", f.Source)
	}
	next, err = UseSessions(next, DefaultSessions)
	if err != nil {
		t.Fatal(err)
	}
	f = FormOf(mustParse(t, next))
	if f.Source.Type != "synthetic-session" || f.Source.Sessions != 64 || f.Source.Turns != 6 || f.Source.NewTokens != 256 {
		t.Errorf("sessions: %+v", f.Source)
	}
	for _, c := range []struct {
		format string
		block  int
	}{{"weka", 0}, {"weka", 8}, {"agentic_mooncake", 4}} {
		next, err = UseUpload(text, "ag.jsonl", c.format, c.block, 4)
		if err != nil {
			t.Fatal(err)
		}
		f = FormOf(mustParse(t, next))
		if f.Source.Format != c.format || f.Source.TraceBlockSize != c.block || f.Source.LoadType != "trace_timestamps" {
			t.Errorf("upload %s/%d: %+v", c.format, c.block, f.Source)
		}
	}
	if _, err := UseUpload(text, "a.jsonl", "dynamo", 16, 1); err == nil {
		t.Error("unknown format accepted")
	}
	if _, err := UseUpload(text, "a b", "mooncake", 16, 1); err == nil {
		t.Error("unsafe name accepted")
	}
}

// TestShareRoundTrip: a link restores the same state.
func TestShareRoundTrip(t *testing.T) {
	edited, _ := SetYAML(ExampleByID("A192").YAML(), agg+".kv_cache.host_offload.connector", "simple_cpu_v0_32")
	cmp := Compare{Axis: AxisG2, Values: []string{"192", "none"}}
	for _, s := range []Share{
		ExampleByID("A192").Share(),
		ExampleByID("B").Share(),
		{Example: "A192", YAML: edited},
		{Example: "A192", YAML: edited, Compare: &cmp, Pass: 17, Rank: 1, Variant: 2},
		{YAML: "traffic: {}\n# ünïcode ✓\n", Upload: &UploadRef{Name: "my.jsonl", Hash: "0123456789ab"}},
	} {
		frag := s.Fragment()
		got, err := ParseFragment("#" + frag)
		if err != nil {
			t.Fatalf("%q: %v", frag, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("round trip of %q:\n got %+v\nwant %+v", frag, got, s)
		}
	}
	if f := ExampleByID("B").Share().Fragment(); f != "ex=B" {
		t.Errorf("example link %q carries more than its id", f)
	}
	if s, err := ParseFragment(""); err != nil || s.Example != DefaultExample().ID || s.Compare == nil {
		t.Errorf("default page: %+v %v", s, err)
	}
	for _, bad := range []string{"ex=nope", "y=!!!", "cmp=connector:x,y", "t=nohash", "%zz"} {
		if _, err := ParseFragment(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCompareVariants(t *testing.T) {
	cfg := mustParse(t, ExampleByID("A192").YAML())
	c := DefaultCompare()
	vs := c.Variants(cfg)
	if len(vs) != 3 || vs[2].Label != "SimpleCPU v0.32" || vs[2].Sets[0] != agg+".kv_cache.host_offload.connector=simple_cpu_v0_32" {
		t.Fatalf("%+v", vs)
	}
	g := Compare{Axis: AxisG2, Values: []string{"2048", "none"}}
	vs = g.Variants(cfg)
	if vs[1].Sets[0] != agg+".kv_cache.host_offload=null" || vs[0].Label != "SimpleCPU v0.32, G2 2048 blocks" {
		t.Fatalf("%+v", vs)
	}
	for _, bad := range []string{"connector:offloading_v0_24", "g2:1,2,3,4", "g2:0,5", "size:1,2", "g2:5,5"} {
		if _, err := ParseCompare(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestExamplesParse(t *testing.T) {
	for _, e := range Examples {
		cfg := mustParse(t, e.YAML())
		if len(e.Text) < 2 || len(e.Text) > 3 {
			t.Errorf("%s: %d sentences", e.ID, len(e.Text))
		}
		if e.Compare != nil {
			if err := e.Compare.Check(); err != nil {
				t.Errorf("%s: %v", e.ID, err)
			}
		}
		if e.ID == "A192" && FormOf(cfg).G2 != 192 {
			t.Errorf("A192 has G2 %d", FormOf(cfg).G2)
		}
	}
}

func TestFormatting(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 15568: "15,568", -20320: "-20,320", 1234567: "1,234,567"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q", n, got)
		}
	}
	if Ms(-1) != "–" || Ms(2.0004) != "2" || Ms(863.375) != "863.375" {
		t.Error("Ms")
	}
	if Percent(1, 3) != "33.3%" || Percent(1, 0) != "–" {
		t.Error("Percent")
	}
	rows := []proto.Row{{ID: "a", TTFT: 3}, {ID: "b", TTFT: 1}, {ID: "c", TTFT: 3}}
	s := SortRows(rows, "ttft", false)
	if s[0].ID != "b" || s[1].ID != "a" || s[2].ID != "c" {
		t.Errorf("asc %v", s)
	}
	s = SortRows(rows, "ttft", true)
	if s[0].ID != "a" || s[2].ID != "b" {
		t.Errorf("desc %v", s)
	}
	if SafeName("../x y.jsonl") != "x_y.jsonl" || SafeName(".hidden") != "trace.hidden" {
		t.Error("SafeName", SafeName("../x y.jsonl"), SafeName(".hidden"))
	}
	if !strings.HasPrefix(TraceHash([]byte("x")), "2d711642b726") {
		t.Error(TraceHash([]byte("x")))
	}
}

// TestFieldNames: every field has its own element-id name, and the names
// are the ones the page's ids have always used.
func TestFieldNames(t *testing.T) {
	seen := map[string]Field{}
	for f := NoField + 1; f < NumFields; f++ {
		n := f.Name()
		if n == "" || seen[n] != NoField {
			t.Errorf("field %d: name %q (also %d)", f, n, seen[n])
		}
		seen[n] = f
	}
	if FG1.ID() != "f-g1" || FDecodeReplicas.ErrID() != "err-decode_replicas" || FTrace.ID() != "f-trace" {
		t.Errorf("ids %q %q %q", FG1.ID(), FDecodeReplicas.ErrID(), FTrace.ID())
	}
	if (NumFields+1).Name() != "" || Field(-1).String() != "Field(-1)" {
		t.Error("an out-of-range field has a name")
	}
}

// TestSessionSpecSet: each generator input sets its own number.
func TestSessionSpecSet(t *testing.T) {
	var s SessionSpec
	for g, n := range []int{1, 2, 3, 4, 5, 6} {
		s.Set(GenField(g), n)
	}
	if want := (SessionSpec{Sessions: 1, Turns: 2, NewTokens: 3, OutputTokens: 4, Concurrency: 5, DelayMs: 6}); s != want {
		t.Errorf("%+v, want %+v", s, want)
	}
}

func TestDuration(t *testing.T) {
	for ms, want := range map[float64]string{193.999: "194 ms", 1467.2: "1,467 ms", 14200: "14.2 s", -1: "–", 0.4: "0 ms"} {
		if got := Duration(ms); got != want {
			t.Errorf("Duration(%v) = %q; want %q", ms, got, want)
		}
	}
}

// TestRoutingControls: the routing picker writes engine.routing (round
// robin removes the key, the default), an unknown policy is refused, the
// form reads the policy back, a routing error belongs to the picker, and
// the routing compare axis sets engine.routing per run.
func TestRoutingControls(t *testing.T) {
	text := ExampleByID("A192").YAML()
	cfg := mustParse(t, text)
	if f := FormOf(cfg); f.Routing != "round_robin" {
		t.Errorf("default form routing %q", f.Routing)
	}
	next, err := Edit(text, cfg, FormOf(cfg), FRouting, "kv_router")
	if err != nil {
		t.Fatal(err)
	}
	if f := FormOf(mustParse(t, next)); f.Routing != "kv_router" {
		t.Errorf("after the edit: %q\n%s", f.Routing, next)
	}
	back, err := Edit(next, mustParse(t, next), FormOf(cfg), FRouting, "round_robin")
	if err != nil || strings.Contains(back, "routing") {
		t.Errorf("round robin leaves %v:\n%s", err, back)
	}
	if _, err := Edit(text, cfg, FormOf(cfg), FRouting, "random"); err == nil {
		t.Error("unknown policy accepted")
	}
	if FieldOfPath("engine.routing.temperature") != FRouting {
		t.Error("engine.routing errors do not go to the picker")
	}
	c, err := ParseCompare("routing:round_robin,least_loaded,kv_router")
	if err != nil {
		t.Fatal(err)
	}
	vs := c.Variants(cfg)
	if len(vs) != 3 || vs[2].Label != "KV router" || vs[1].Sets[0] != "engine.routing=least_loaded" {
		t.Errorf("%+v", vs)
	}
	if _, err := ParseCompare("routing:round_robin,random"); err == nil {
		t.Error("unknown policy compared")
	}
	if err := DefaultRoutingCompare().Check(); err != nil {
		t.Error(err)
	}
}

// TestWorkerColumn: an aggregated run on several workers gets a "worker"
// column (W<i>); a P/D run keeps its own; one worker, none.
func TestWorkerColumn(t *testing.T) {
	if n := len(TableColumns(false, 1, false)); n != len(Columns) {
		t.Errorf("one worker: %d columns", n)
	}
	if c := TableColumns(false, 4, false); c[len(c)-1] != WorkerColumn {
		t.Errorf("four workers: %v", c)
	}
	if c := TableColumns(true, 0, false); c[len(c)-1] != PDColumn {
		t.Errorf("P/D: %v", c)
	}
	if WorkerCell(proto.Row{Prefill: 2, Decode: -1}) != "W2" || WorkerCell(proto.Row{Prefill: -1}) != "–" {
		t.Error("WorkerCell")
	}
}

// TestBoundColumns: a run whose timing records bounds gets the three
// prefill-time columns after "recomputed" (before a P/D or worker column);
// other runs do not; the table sorts by them.
func TestBoundColumns(t *testing.T) {
	keys := func(cs []Column) (k []string) {
		for _, c := range cs {
			k = append(k, c.Key)
		}
		return k
	}
	if got := strings.Join(keys(TableColumns(true, 0, true)), ","); got != "id,turn,input,ttft,g1,host,recomputed,passes,compute,memory,pd" {
		t.Errorf("P/D with bounds: %s", got)
	}
	if got := strings.Join(keys(TableColumns(false, 1, true)), ","); got != "id,turn,input,ttft,g1,host,recomputed,passes,compute,memory" {
		t.Errorf("bounds: %s", got)
	}
	if n := len(TableColumns(false, 1, false)); n != len(Columns) || len(Columns) != 7 {
		t.Errorf("no bounds: %d columns", n)
	}
	rows := []proto.Row{{ID: "a", PrefillPasses: 2, ComputeMs: 1, MemoryMs: 9}, {ID: "b", PrefillPasses: 1, ComputeMs: 5, MemoryMs: 0}}
	for key, want := range map[string]string{"passes": "b", "compute": "a", "memory": "b"} {
		if got := SortRows(rows, key, false)[0].ID; got != want {
			t.Errorf("sorted by %s: first %s, want %s", key, got, want)
		}
	}
}

// TestSessionPlacement: one row per session in request order, one cell
// per turn; sessions and turns beyond the limits are left out and said so.
func TestSessionPlacement(t *testing.T) {
	rows := []proto.Row{
		{Session: "a", Turn: 0, Prefill: 0, Decode: -1}, {Session: "b", Turn: 0, Prefill: 1, Decode: -1},
		{Session: "a", Turn: 1, Prefill: 2, Decode: -1}, {Session: "c", Turn: 0, Prefill: 1, Decode: -1},
		{Session: "a", Turn: 3, Prefill: 0, Decode: -1},
	}
	got, turns, more := SessionPlacement(rows, 2, 3)
	want := []PlacementRow{{"a", []string{"W0", "W2"}}, {"b", []string{"W1"}}}
	if !reflect.DeepEqual(got, want) || turns != 2 || !more {
		t.Errorf("got %v %d %v; want %v 2 true", got, turns, more, want)
	}
	if _, _, more := SessionPlacement(rows[:3], 5, 5); more {
		t.Error("nothing left out, yet more")
	}
	if WorkerStyle("W1") == "" || WorkerStyle("–") != "" || len(TurnHeaders(3)) != 3 {
		t.Error("WorkerStyle / TurnHeaders")
	}
}
