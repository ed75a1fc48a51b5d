package state

import "testing"

// TestUploadKeepsTheLoad: uploading a trace keeps the config's load mode
// (issue 21: the Mooncake conversation config's trace_timestamps was
// rewritten to concurrency: 4); an agentic source's load is not kept.
func TestUploadKeepsTheLoad(t *testing.T) {
	text, err := UseBuiltin(ExampleByID("A192").YAML(), "g2-restore.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if text, err = SetYAML(text, "traffic.load.speedup", "2"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		format string
		block  int
	}{{"mooncake", 512}, {"mooncake-delta", 16}} {
		next, err := UseUpload(text, "conv.jsonl", c.format, c.block, 4)
		if err != nil {
			t.Fatal(err)
		}
		cfg := mustParse(t, next)
		f := FormOf(cfg)
		if f.Source.Path != "conv.jsonl" || f.Source.Format != c.format || f.Source.TraceBlockSize != c.block ||
			f.Source.LoadType != "trace_timestamps" || cfg.Traffic.Load.Speedup != 2 {
			t.Errorf("upload %s/%d over trace_timestamps: %+v, speedup %v", c.format, c.block, f.Source, cfg.Traffic.Load.Speedup)
		}
	}
	conc, err := UseSessions(text, DefaultSessions)
	if err != nil {
		t.Fatal(err)
	}
	next, err := UseUpload(conc, "conv.jsonl", "mooncake", 512, 4)
	if err != nil {
		t.Fatal(err)
	}
	if f := FormOf(mustParse(t, next)); f.Source.LoadType != "concurrency" || f.Source.Concurrency != DefaultSessions.Concurrency {
		t.Errorf("upload over a concurrency load: %+v", f.Source)
	}
	ag, err := UseUpload(text, "ag.jsonl", "agentic_mooncake", 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	next, err = UseUpload(ag, "conv.jsonl", "mooncake", 512, 3)
	if err != nil {
		t.Fatal(err)
	}
	if f := FormOf(mustParse(t, next)); f.Source.LoadType != "concurrency" || f.Source.Concurrency != 3 {
		t.Errorf("upload over an agentic load: %+v", f.Source)
	}
}
