package plot

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/sweep"
	"github.com/kvsim/kvsim/traces"
)

func run(t *testing.T, vary ...string) *sweep.Result {
	t.Helper()
	data, err := traces.Read(sweep.DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sweep.NewPlan(sweep.Spec{Name: sweep.DefaultConfig, Data: data, Vary: vary})
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Run(replay.Traces{Builtin: true}, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// texts parses b as XML, checks that its root is <svg>, and returns the
// content of its <text> elements.
func texts(t *testing.T, name string, b []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var out []string
	root := ""
	in := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", name, err)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = v.Name.Local
				if v.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("%s: root namespace %q", name, v.Name.Space)
				}
			}
			in = v.Name.Local == "text"
		case xml.CharData:
			if in {
				out = append(out, strings.TrimSpace(string(v)))
			}
		case xml.EndElement:
			in = false
		}
	}
	if root != "svg" {
		t.Fatalf("%s: root element %q; want svg", name, root)
	}
	return out
}

// TestDefaultSweepPlots: the default sweep gives three valid SVG files
// with one series per connector (p50 and p99 for TTFT), the G2 size on x.
func TestDefaultSweepPlots(t *testing.T) {
	r := run(t, sweep.DefaultVary...)
	x := r.Plan.XAxis()
	if x != 0 {
		t.Fatalf("x axis %d; want 0 (num_host_blocks)", x)
	}
	files, err := Sweep(r, x)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{Restored, Recomputed, TTFT}) {
		t.Fatalf("files %v", names)
	}
	connectors := []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"}
	for _, f := range files {
		txt := texts(t, f.Name, f.SVG)
		want := connectors
		if f.Name == TTFT {
			want = nil
			for _, c := range connectors {
				want = append(want, c+" p50", c+" p99")
			}
		}
		for _, w := range want {
			if !slices.Contains(txt, w) {
				t.Errorf("%s: no legend entry %q in %q", f.Name, w, txt)
			}
		}
		for _, tick := range []string{"64", "192", "2048"} {
			if !slices.Contains(txt, tick) {
				t.Errorf("%s: no x tick %q", f.Name, tick)
			}
		}
		if !slices.Contains(txt, "G2 size (host_offload.num_host_blocks, blocks)") {
			t.Errorf("%s: no x label in %q", f.Name, txt)
		}
		if dir := os.Getenv("KVSIM_PLOT_DIR"); dir != "" {
			os.WriteFile(filepath.Join(dir, f.Name), f.SVG, 0o644)
		}
	}
	again, _ := Sweep(r, x)
	for i := range files {
		if !bytes.Equal(files[i].SVG, again[i].SVG) {
			t.Errorf("%s: two renderings differ", files[i].Name)
		}
	}
}

// TestPlotsWithoutG2: a sweep without a CPU tier has no restored plot; the
// x axis is the numeric --vary even when it is not the first.
func TestPlotsWithoutG2(t *testing.T) {
	r := run(t, "engine.workers.aggregated.kv_cache.host_offload=null", "kv_cache.capacity.blocks=64,128,256")
	x := r.Plan.XAxis()
	if x != 1 {
		t.Fatalf("x axis %d; want 1", x)
	}
	files, err := Sweep(r, x)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Name != Recomputed || files[1].Name != TTFT {
		t.Fatalf("files %v", files)
	}
	if txt := texts(t, files[0].Name, files[0].SVG); !slices.Contains(txt, "null") {
		t.Errorf("recomputed: legend %q lacks the series null", txt)
	}
	if _, err := Sweep(r, 0); err == nil {
		t.Error("a non-numeric axis was accepted as x")
	}
}
