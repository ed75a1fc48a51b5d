package trace

import (
	"os"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/vtime"
)

func readWekaText(t *testing.T, text string, opt Options) (*Workload, error) {
	t.Helper()
	opt.Format = FormatWeka
	if opt.Name == "" {
		opt.Name = "w.jsonl"
	}
	return Read(strings.NewReader(text), opt)
}

type edgeWant struct {
	dep      string
	delay    vtime.Time
	dispatch bool
}

func edgesOf(s *Session, turn int) []edgeWant {
	var out []edgeWant
	tu := &s.Turns[turn]
	for j, d := range tu.Deps {
		out = append(out, edgeWant{s.Turns[d].RequestID, s.Edges[turn][j].DelayMs, s.Edges[turn][j].OnDispatch})
	}
	return out
}

func turnByID(t *testing.T, s *Session, id string) int {
	t.Helper()
	for i := range s.Turns {
		if s.Turns[i].RequestID == id {
			return i
		}
	}
	t.Fatalf("no turn %q", id)
	return -1
}

// The public fixture of aisimulate (testdata/README.md): the subagent's
// request is spawned after the seed completes (98 ms after its end), the
// restore waits for the seed's completion (198 ms) and joins the subagent
// (98 ms), and the finish is held by the replay barrier on the restore.
func TestWekaFixture(t *testing.T) {
	data, err := os.ReadFile("testdata/weka-g2-restore.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	w, err := readWekaText(t, string(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !w.Agentic || w.BlockSize != 4 || w.NestedTimestampBasis != BasisAbsolute || len(w.Sessions) != 1 || w.Rows != 4 {
		t.Fatalf("workload %+v", w)
	}
	s := &w.Sessions[0]
	ids := []string{}
	for _, tu := range s.Turns {
		ids = append(ids, tu.RequestID)
	}
	want := "g2-parent-resume:outer:0 g2-parent-resume:outer:1:inner:0 g2-parent-resume:outer:2 g2-parent-resume:outer:3"
	if got := strings.Join(ids, " "); got != want {
		t.Fatalf("turns %s; want %s", got, want)
	}
	p := "g2-parent-resume:"
	checks := []struct {
		id   string
		want []edgeWant
	}{
		{"outer:0", nil},
		{"outer:1:inner:0", []edgeWant{{p + "outer:0", 98, false}}},
		{"outer:2", []edgeWant{{p + "outer:0", 198, false}, {p + "outer:1:inner:0", 98, false}}},
		{"outer:3", []edgeWant{{p + "outer:2", 0, false}}},
	}
	for _, c := range checks {
		got := edgesOf(s, turnByID(t, s, p+c.id))
		if len(got) != len(c.want) {
			t.Errorf("%s edges %v; want %v", c.id, got, c.want)
			continue
		}
		for i := range got {
			if got[i].dep != c.want[i].dep || got[i].dispatch != c.want[i].dispatch || got[i].delay != c.want[i].delay {
				t.Errorf("%s edge %d %v; want %v", c.id, i, got[i], c.want[i])
			}
		}
	}
	// Prompts: two shared full blocks and a private partial block.
	a, b := s.Turns[0].Content, s.Turns[2].Content
	if len(a) != 3 || a[0] != b[0] || a[1] != b[1] || a[2] == b[2] {
		t.Errorf("contents %v and %v; want the two full blocks shared, the partial ones private", a, b)
	}
}
