package engine_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/scheduler"
	"github.com/kvsim/kvsim/core/trace"
	"github.com/kvsim/kvsim/traces"
)

const hostOffload = "engine.workers.aggregated.kv_cache.host_offload"

// admissions records every admission with the request's known tokens at
// that instant (prompt plus tokens generated so far).
type admissions struct {
	list []admission
}

type admission struct {
	req           string
	prompt, known int
	reused        int
	readmission   bool
	at            float64
}

func (a *admissions) SchedulerEvent(ev scheduler.Event) {
	if ev.Kind == scheduler.EvAdmit {
		a.list = append(a.list, admission{req: fmt.Sprint(ev.Req.Index), prompt: ev.Req.PromptLen, known: ev.Req.Len(),
			reused: ev.Reused, readmission: ev.Readmission, at: ev.At})
	}
}

type runResult struct {
	e    *engine.Engine
	adm  *admissions
	sum  report.Summary
	host int64 // Σ first_admission_host_reused_input_tokens
	g1   int64 // Σ first_admission_g1_reused_input_tokens
}

// runA runs acceptance.md §A (connectors.yaml over the generated 8 × 6
// trace) with the given --set overrides, checker on.
func runA(t *testing.T, sets ...string) *runResult {
	t.Helper()
	var gen bytes.Buffer
	if err := trace.WriteConnectorsTrace(&gen, trace.ConnectorsTraceDefault()); err != nil {
		t.Fatal(err)
	}
	data, err := traces.Read("connectors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("connectors.yaml", ".", data, sets)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := replay.Workload(cfg, func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(gen.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(cfg, wl, engine.Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	r := &runResult{e: e, adm: &admissions{}}
	for _, rk := range e.Ranks() {
		rk.SetObserver(r.adm)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	r.sum = report.Summarize(e.Records, e.Dispatched(), e.RunStats())
	for _, rec := range e.Records {
		r.host += int64(rec.FirstHost)
		r.g1 += int64(rec.FirstG1)
	}
	return r
}

func TestScratchA(t *testing.T) {
	for _, n := range []int{64, 192, 224} {
		for _, c := range []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"} {
			for _, bw := range []string{"0", "1", "32"} {
				res := runA(t, hostOffload+".num_host_blocks="+fmt.Sprint(n), hostOffload+".connector="+c, hostOffload+".d2h_bandwidth_gbps="+bw, hostOffload+".h2d_bandwidth_gbps="+bw)
				t.Logf("%s %d bw %s: restored %d g1 %d committed %d preempt %d sum %d g2 %+v", c, n, bw, res.host, res.g1, res.sum.CommittedPrefillTokens, res.sum.Preemptions, res.host+res.g1+res.sum.CommittedPrefillTokens, *res.sum.G2)
				for _, a := range res.adm.list {
					if a.readmission {
						t.Logf("   readmit %+v", a)
					}
				}
			}
		}
	}
}
