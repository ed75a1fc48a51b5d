package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"github.com/kvsim/kvsim/traces"
)

type listing struct {
	Count int `json:"count"`
	Axes  []struct {
		Path    string   `json:"path"`
		Values  []string `json:"values"`
		Targets []string `json:"targets"`
	} `json:"axes"`
	Points []pointInfo `json:"points"`
}

const sweepBody = `{"example": "connectors.yaml", "vary": {
  "engine.workers.aggregated.kv_cache.host_offload.num_host_blocks": [2048, 192],
  "connector": ["offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"]}`

func list(t *testing.T, h http.Handler, body string) (listing, []byte) {
	t.Helper()
	rec := do(t, h, http.MethodPost, "/api/sweep", "application/json", []byte(body))
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var l listing
	if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	return l, rec.Body.Bytes()
}

// TestSweepListing: the points are core/sweep's cartesian product in
// row-major order of the axes as written (last axis fastest), the same on
// every call, and each point's "set" is its whole list of overrides.
func TestSweepListing(t *testing.T) {
	h := Handler()
	l, first := list(t, h, sweepBody+"}")
	var want []pointInfo
	for _, blocks := range []string{"2048", "192"} {
		for _, c := range []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"} {
			want = append(want, pointInfo{Index: len(want),
				Label:  fmt.Sprintf("point %d (%s.num_host_blocks=%s, connector=%s)", len(want), hostOffload, blocks, c),
				Values: []string{blocks, c},
				Set:    []string{hostOffload + ".num_host_blocks=" + blocks, hostOffload + ".connector=" + c}})
		}
	}
	if l.Count != 6 || !reflect.DeepEqual(l.Points, want) {
		t.Fatalf("points\n %+v\nwant\n %+v", l.Points, want)
	}
	if len(l.Axes) != 2 || l.Axes[1].Path != "connector" || !reflect.DeepEqual(l.Axes[1].Targets, []string{hostOffload + ".connector"}) {
		t.Errorf("axes %+v", l.Axes)
	}
	for range 3 {
		if _, again := list(t, h, sweepBody+"}"); !bytes.Equal(again, first) {
			t.Fatalf("listing changed between calls:\n%s\n%s", first, again)
		}
	}
	// The array form takes the CLI's --vary arguments and gives the same grid.
	_, cli := list(t, h, `{"example": "connectors.yaml", "vary": ["`+hostOffload+`.num_host_blocks=2048,192", "connector=offloading_v0_24,offloading_v0_32,simple_cpu_v0_32"]}`)
	if !bytes.Equal(cli, first) {
		t.Errorf("array form differs:\n%s\n%s", cli, first)
	}
	// Writing the axes the other way round makes the connector vary slowest;
	// the request's own "set" comes first in every point's set.
	l2, _ := list(t, h, `{"example": "connectors.yaml", "set": ["traffic.load.concurrency=2"], "vary": {
	  "connector": ["offloading_v0_24", "simple_cpu_v0_32"],
	  "host_offload.num_host_blocks": [2048, 192]}}`)
	wantSet := []string{"traffic.load.concurrency=2", hostOffload + ".connector=offloading_v0_24", hostOffload + ".num_host_blocks=192"}
	if got := l2.Points[1].Set; !reflect.DeepEqual(got, wantSet) {
		t.Errorf("point 1 of the swapped grid: %q; want %q", got, wantSet)
	}
}

// TestSweepPointEqualsSingleRun: every point of the §A grid answers with
// the run /api/replay gives for the point's "set", and with the native
// run, byte for byte; the recomputed tokens are
// docs/model/cases.md ("Case A: connector comparison")'s.
func TestSweepPointEqualsSingleRun(t *testing.T) {
	h := Handler()
	l, _ := list(t, h, sweepBody+"}")
	recomputed := []int64{6544, 6544, 5248, 8800, 6544, 8368}
	for i, want := range recomputed {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			rec := do(t, h, http.MethodPost, "/api/sweep", "application/json", []byte(fmt.Sprintf(`%s, "point": %d, "requests": true}`, sweepBody, i)))
			a := decode(t, rec)
			var p pointInfo
			if err := json.Unmarshal(a.Point, &p); err != nil || !reflect.DeepEqual(p, l.Points[i]) {
				t.Fatalf("point %s (%v); listed %+v", a.Point, err, l.Points[i])
			}
			checkSame(t, a, native(t, "connectors.yaml", p.Set))
			single := decode(t, post(t, h, "/api/replay", map[string]any{"example": "connectors.yaml", "set": p.Set}))
			if !bytes.Equal(single.Prediction, a.Prediction) || !bytes.Equal(single.Summary, a.Summary) {
				t.Errorf("point %d differs from /api/replay with set %v", i, p.Set)
			}
			if got := committed(t, a.Summary); got != want {
				t.Errorf("committed_prefill_tokens %d; want %d", got, want)
			}
		})
	}
}

// TestSweepValues: every JSON value kind becomes the --vary text
// documented, and null removes a key.
func TestSweepValues(t *testing.T) {
	args, err := varyArgs(json.RawMessage(`{"p": [null, 1.5, "x y", {"a": [1, 2]}, true, "8", "'a,b'"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`p=null,1.5,x y,{"a":[1,2]},true,8,'a,b'`}; !reflect.DeepEqual(args, want) {
		t.Errorf("args %q; want %q", args, want)
	}

	h := Handler()
	body := `{"example": "g2-restore.yaml", "set": ["` + hostOffload + `.h2d_bandwidth_gbps=0.1"],
	  "vary": {"` + hostOffload + `": [null, {"num_host_blocks": 8, "d2h_bandwidth_gbps": 1, "h2d_bandwidth_gbps": 1}]}, "point": %d}`
	for i, want := range []int64{36, 28} {
		a := decode(t, do(t, h, http.MethodPost, "/api/sweep", "application/json", []byte(fmt.Sprintf(body, i))))
		if got := committed(t, a.Summary); got != want {
			t.Errorf("point %d: committed_prefill_tokens %d; want %d", i, got, want)
		}
	}
}

// TestSweepRejects: core/sweep's messages (the CLI's) with status 422, and
// the limits checked per point before the fan-out.
func TestSweepRejects(t *testing.T) {
	h := Handler()
	for _, c := range []struct {
		name, body string
		status     int
		kind       string
		point      int // -1: none
		msg        string
	}{
		{"bad value", `{"example": "g2-restore.yaml", "vary": {"` + hostOffload + `.num_host_blocks": [8, -1]}}`, 422, kindSweep, -1,
			"--vary " + hostOffload + ".num_host_blocks=8,-1: value \"-1\": " + hostOffload + ".num_host_blocks: expected a positive integer, got -1"},
		{"unknown shorthand", `{"example": "g2-restore.yaml", "vary": ["blocks=1,2"]}`, 422, kindSweep, -1, ""},
		{"point over a limit", `{"example": "g2-restore.yaml", "vary": {"kv_cache.capacity.blocks": [3, 2000000]}}`, 422, kindLimit, 1,
			"--set engine.workers.aggregated.kv_cache.capacity.blocks=2000000: engine.workers.aggregated.kv_cache.capacity.blocks: 2,000,000 G1 blocks per DP rank exceed the limit of 1,048,576"},
		{"base config rejected", `{"config": "traffic: [", "vary": {"connector": ["simple_cpu_v0_32"]}}`, 422, kindConfig, -1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := do(t, h, http.MethodPost, "/api/sweep", "application/json", []byte(c.body))
			var e apiError
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
				t.Fatal(err)
			}
			if rec.Code != c.status || e.Kind != c.kind || (c.msg != "" && e.Msg != c.msg) || e.Msg == "" {
				t.Errorf("%d %s\nwant %d %s %q", rec.Code, rec.Body, c.status, c.kind, c.msg)
			}
			if (c.point < 0) != (e.Point == nil) || (e.Point != nil && *e.Point != c.point) {
				t.Errorf("point %v; want %d", e.Point, c.point)
			}
		})
	}
}

func TestHealthAndExamples(t *testing.T) {
	h := Handler()
	rec := do(t, h, http.MethodGet, "/api/health", "", nil)
	var health struct {
		OK     bool   `json:"ok"`
		Limits Limits `json:"limits"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &health); err != nil || rec.Code != 200 || !health.OK || health.Limits != DefaultLimits() {
		t.Fatalf("health: %d %s", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("Access-Control-Allow-Origin"); got != "*" {
		t.Errorf("CORS header %q", got)
	}
	if rec := do(t, h, http.MethodOptions, "/api/replay", "", nil); rec.Code != http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Methods") == "" {
		t.Errorf("preflight: %d %v", rec.Code, rec.Header())
	}

	rec = do(t, h, http.MethodGet, "/api/examples", "", nil)
	var list struct {
		Examples []exampleInfo `json:"examples"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || rec.Code != 200 {
		t.Fatalf("examples: %d %s", rec.Code, rec.Body)
	}
	byName := map[string]exampleInfo{}
	for _, e := range list.Examples {
		byName[e.Name] = e
	}
	if e := byName["g2-restore.yaml"]; e.Kind != "config" || e.Trace != "g2-restore.jsonl" || e.Description == "" {
		t.Errorf("g2-restore.yaml: %+v", e)
	}
	if e := byName["connectors.yaml"]; e.Kind != "config" || e.Trace != "delta-sessions.jsonl" {
		t.Errorf("connectors.yaml: %+v", e)
	}
	if e := byName["delta-sessions.jsonl"]; e.Kind != "trace" || e.Rows != 48 {
		t.Errorf("delta-sessions.jsonl: %+v", e)
	}
	if e := byName["g2-restore.jsonl"]; e.Kind != "trace" || e.Rows != 4 {
		t.Errorf("g2-restore.jsonl: %+v", e)
	}
	for _, name := range traces.Names() {
		rec := do(t, h, http.MethodGet, "/api/examples/"+name, "", nil)
		want, _ := traces.Read(name)
		if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), want) {
			t.Errorf("%s: %d, %d bytes; want %d bytes", name, rec.Code, rec.Body.Len(), len(want))
		}
	}
	if ct := do(t, h, http.MethodGet, "/api/examples/g2-restore.yaml", "", nil).Header().Get("Content-Type"); ct != "application/yaml; charset=utf-8" {
		t.Errorf("yaml content type %q", ct)
	}
}
