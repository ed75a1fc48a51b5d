package trace

import (
	"bytes"
	"errors"
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

// wekaSession is aisimulate's write_trace: one session "play" of model
// "model", block size 4, with the given requests (JSON text).
func wekaSession(id string, requests ...string) string {
	return `{"id":"` + id + `","models":["model"],"block_size":4,"hash_id_scope":"local","requests":[` +
		strings.Join(requests, ",") + "]}\n"
}

func mustWeka(t *testing.T, text string, opt Options) *Workload {
	t.Helper()
	w, err := readWekaText(t, text, opt)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// checkEdges compares the edges of the turn named id (a source id) with
// want, in order.
func checkEdges(t *testing.T, s *Session, id string, want ...edgeWant) {
	t.Helper()
	got := edgesOf(s, turnByID(t, s, s.ID+":"+id))
	if len(got) != len(want) {
		t.Errorf("%s edges %v; want %v", id, got, want)
		return
	}
	for i := range got {
		w := want[i]
		w.dep = s.ID + ":" + w.dep
		if got[i] != w {
			t.Errorf("%s edge %d %v; want %v", id, i, got[i], w)
		}
	}
}

// aisimulate weka.rs tests::explicit_overlap_join_and_background_lower_to_typed_edges:
// a child that starts while its parent runs is spawned on the parent's
// dispatch (300 ms); the parent's next request joins it (500 ms after its
// end); a background subagent is not joined and keeps its zero output.
func TestWekaOverlapJoinBackground(t *testing.T) {
	w := mustWeka(t, wekaSession("play",
		`{"t":0.0,"type":"s","model":"model","in":8,"out":1,"hash_ids":[1,2],"api_time":1.0}`,
		`{"t":0.3,"type":"subagent","agent_id":"a","subagent_type":"Explore","duration_ms":400,"status":"completed","requests":[
			{"t":0.3,"type":"s","model":"model","in":6,"out":1,"hash_ids":[3,4],"api_time":0.2}],"models":["model"]}`,
		`{"t":1.0,"type":"s","model":"model","in":9,"out":1,"hash_ids":[1,2,5]}`,
		`{"t":1.2,"type":"subagent","agent_id":"bg","subagent_type":"Explore","status":"async_launched","requests":[
			{"t":1.2,"type":"s","model":"model","in":4,"out":0,"hash_ids":[9],"api_time":0.1}],"models":["model"]}`,
		`{"t":1.5,"type":"s","model":"model","in":13,"out":1,"hash_ids":[1,2,5,6]}`), Options{})
	s := &w.Sessions[0]
	if w.Rows != 5 {
		t.Fatalf("rows %d; want 5", w.Rows)
	}
	checkEdges(t, s, "outer:1:inner:0", edgeWant{"outer:0", 300, true})
	checkEdges(t, s, "outer:2", edgeWant{"outer:0", 0, false}, edgeWant{"outer:1:inner:0", 500, false})
	bg := turnByID(t, s, "play:outer:3:inner:0")
	if s.Turns[bg].OutputLength != 0 {
		t.Errorf("background output %d; want 0", s.Turns[bg].OutputLength)
	}
	checkEdges(t, s, "outer:3:inner:0", edgeWant{"outer:2", 200, false})
	checkEdges(t, s, "outer:4", edgeWant{"outer:2", 500, false})
}

// aisimulate weka.rs tests::post_completion_spawn_and_equality_join_preserve_recorded_timing.
func TestWekaPostCompletionSpawn(t *testing.T) {
	w := mustWeka(t, wekaSession("play",
		`{"t":0.0,"type":"s","model":"model","in":8,"out":1,"hash_ids":[1,2],"api_time":0.5}`,
		`{"t":0.9,"type":"subagent","agent_id":"a","subagent_type":"Explore","duration_ms":300,"status":"completed","requests":[
			{"t":0.9,"type":"s","model":"model","in":8,"out":1,"hash_ids":[3,4],"api_time":0.2},
			{"t":1.15,"type":"s","model":"model","in":12,"out":1,"hash_ids":[3,4,5],"api_time":0.05}],"models":["model"]}`,
		`{"t":1.2,"type":"s","model":"model","in":12,"out":1,"hash_ids":[1,2,6]}`), Options{})
	s := &w.Sessions[0]
	checkEdges(t, s, "outer:1:inner:0", edgeWant{"outer:0", 400, false})
	checkEdges(t, s, "outer:1:inner:1", edgeWant{"outer:1:inner:0", 50, false})
	checkEdges(t, s, "outer:2", edgeWant{"outer:0", 700, false}, edgeWant{"outer:1:inner:1", 0, false})
}

// aisimulate weka.rs tests::flattened_hash_fork_becomes_a_dispatch_spawned_child_stream.
func TestWekaFlattenedFork(t *testing.T) {
	w := mustWeka(t, wekaSession("play",
		`{"t":0.0,"type":"s","model":"model","in":8,"out":1,"hash_ids":[1,2],"api_time":2.0}`,
		`{"t":0.5,"type":"s","model":"model","in":8,"out":1,"hash_ids":[1,3],"api_time":0.2}`,
		`{"t":0.8,"type":"s","model":"model","in":12,"out":1,"hash_ids":[1,3,4],"api_time":0.2}`,
		`{"t":2.0,"type":"s","model":"model","in":12,"out":1,"hash_ids":[1,2,5]}`), Options{})
	s := &w.Sessions[0]
	checkEdges(t, s, "outer:1", edgeWant{"outer:0", 500, true})
	checkEdges(t, s, "outer:2", edgeWant{"outer:1", 100, false})
	checkEdges(t, s, "outer:3", edgeWant{"outer:0", 0, false}, edgeWant{"outer:2", 0, false})
}

// aisimulate weka.rs tests::explicit_subagent_spawn_and_join_use_one_parent_stream:
// the subagent belongs to the latest parent request before it (outer:1, a
// forked stream) and only that stream's next request joins it.
func TestWekaSubagentOwnerStream(t *testing.T) {
	w := mustWeka(t, wekaSession("play",
		`{"t":0.0,"type":"s","model":"model","in":8,"out":1,"hash_ids":[1,2],"api_time":1.0}`,
		`{"t":0.2,"type":"s","model":"model","in":8,"out":1,"hash_ids":[1,3],"api_time":0.2}`,
		`{"t":0.3,"type":"subagent","agent_id":"owned","subagent_type":"Explore","duration_ms":500,"status":"completed","requests":[
			{"t":0.3,"type":"s","model":"model","in":4,"out":1,"hash_ids":[9],"api_time":0.1}],"models":["model"]}`,
		`{"t":1.0,"type":"s","model":"model","in":12,"out":1,"hash_ids":[1,2,4]}`,
		`{"t":1.2,"type":"s","model":"model","in":12,"out":1,"hash_ids":[1,3,5]}`), Options{})
	s := &w.Sessions[0]
	checkEdges(t, s, "outer:2:inner:0", edgeWant{"outer:1", 100, true})
	for _, e := range edgesOf(s, turnByID(t, s, "play:outer:3")) {
		if e.dep == "play:outer:2:inner:0" {
			t.Errorf("outer:3 (another stream) waits for the subagent: %v", e)
		}
	}
	found := false
	for _, e := range edgesOf(s, turnByID(t, s, "play:outer:4")) {
		found = found || e.dep == "play:outer:2:inner:0" && !e.dispatch
	}
	if !found {
		t.Errorf("outer:4 does not join the subagent: %v", edgesOf(s, turnByID(t, s, "play:outer:4")))
	}
}

// aisimulate weka.rs tests::local_hashes_are_namespaced_and_partial_tails_are_private
// and extra_hashes_are_truncated_and_missing_blocks_are_request_private.
func TestWekaHashes(t *testing.T) {
	r := `{"t":0.0,"type":"s","model":"model","in":6,"out":1,"hash_ids":[7,8]}`
	w := mustWeka(t, wekaSession("a", r)+wekaSession("b", r), Options{})
	a, b := w.Sessions[0].Turns[0].Content, w.Sessions[1].Turns[0].Content
	if len(a) != 2 || a[0] == b[0] || a[1] == b[1] {
		t.Errorf("contents %v, %v; want two blocks each, none shared between sessions", a, b)
	}
	w = mustWeka(t, wekaSession("p",
		`{"t":0.0,"type":"s","model":"model","in":8,"out":1,"hash_ids":[7,8,999]}`,
		`{"t":1.0,"type":"s","model":"model","in":12,"out":1,"hash_ids":[7]}`), Options{})
	first, second := w.Sessions[0].Turns[0].Content, w.Sessions[0].Turns[1].Content
	if len(first) != 2 || len(second) != 3 || first[0] != second[0] || first[1] == second[1] || second[1] == second[2] {
		t.Errorf("contents %v, %v; want 2 and 3 blocks sharing only the first", first, second)
	}
}

// aisimulate weka.rs tests::auto_infers_relative_basis_for_raw_kv_cache_tester_shape,
// auto_uses_later_relative_evidence_for_the_complete_jsonl_corpus and
// auto_defaults_delayed_children_to_absolute_and_explicit_override_is_authoritative:
// the basis decides when a child's stream is spawned.
func TestWekaNestedBasis(t *testing.T) {
	raw := wekaSession("raw",
		`{"t":0.0,"type":"s","model":"model","in":4,"out":1,"hash_ids":[1]}`,
		`{"t":10.0,"type":"subagent","agent_id":"raw-worker","subagent_type":"Explore","status":"completed","requests":[
			{"t":0.0,"type":"s","model":"model","in":4,"out":1,"hash_ids":[2],"api_time":0.1},
			{"t":0.5,"type":"s","model":"model","in":8,"out":1,"hash_ids":[2,3]}],"models":["model"]}`,
		`{"t":12.0,"type":"s","model":"model","in":8,"out":1,"hash_ids":[1,4]}`)
	w := mustWeka(t, raw, Options{})
	if w.NestedTimestampBasis != BasisRelative {
		t.Errorf("basis %s; want relative", w.NestedTimestampBasis)
	}
	s := &w.Sessions[0]
	checkEdges(t, s, "outer:1:inner:0", edgeWant{"outer:0", 10000, false})
	checkEdges(t, s, "outer:1:inner:1", edgeWant{"outer:1:inner:0", 400, false})

	if _, err := readWekaText(t, raw, Options{NestedTimestampBasis: BasisAbsolute}); err == nil ||
		!strings.Contains(err.Error(), "w.jsonl:2:9: requests[1].requests[0].t: inner request timestamp 0 precedes its subagent marker timestamp 10 under the absolute nested_timestamp_basis") {
		t.Errorf("absolute basis: %v", err)
	}

	delayed := wekaSession("d",
		`{"t":0.0,"type":"s","model":"model","in":4,"out":1,"hash_ids":[1]}`,
		`{"t":1.0,"type":"subagent","agent_id":"worker","subagent_type":"Explore","status":"completed","requests":[
			{"t":2.0,"type":"s","model":"model","in":4,"out":1,"hash_ids":[2]}],"models":["model"]}`)
	for basis, want := range map[string]vtime.Time{"": 2000, BasisAbsolute: 2000, BasisRelative: 3000} {
		w := mustWeka(t, delayed, Options{NestedTimestampBasis: basis})
		checkEdges(t, &w.Sessions[0], "outer:1:inner:0", edgeWant{"outer:0", want, false})
	}
	mixed := mustWeka(t, wekaSession("abs",
		`{"t":0.0,"type":"s","model":"model","in":4,"out":1,"hash_ids":[1]}`,
		`{"t":10.0,"type":"subagent","agent_id":"w","subagent_type":"Explore","status":"completed","requests":[
			{"t":10.0,"type":"s","model":"model","in":4,"out":1,"hash_ids":[2]}],"models":["model"]}`)+
		wekaSession("rel",
			`{"t":0.0,"type":"s","model":"model","in":4,"out":1,"hash_ids":[3]}`,
			`{"t":20.0,"type":"subagent","agent_id":"w","subagent_type":"Explore","status":"completed","requests":[
			{"t":0.0,"type":"s","model":"model","in":4,"out":1,"hash_ids":[4]}],"models":["model"]}`), Options{})
	checkEdges(t, &mixed.Sessions[0], "outer:1:inner:0", edgeWant{"outer:0", 20000, false})
	checkEdges(t, &mixed.Sessions[1], "outer:1:inner:0", edgeWant{"outer:0", 20000, false})
}

// Errors name line, column and field path (the messages follow aisimulate's
// validation in weka.rs).
func TestWekaErrors(t *testing.T) {
	req := `{"t":0.0,"type":"s","model":"model","in":4,"out":1,"hash_ids":[1]}`
	cases := []struct{ text, want string }{
		{`{"id":"p","block_size":4,"hash_id_scope":"global","requests":[]}`,
			`w.jsonl:1:42: hash_id_scope: unsupported hash_id_scope "global"; expected local`},
		{`{"id":" ","block_size":4,"hash_id_scope":"local","requests":[]}`, `w.jsonl:1:7: id: the session id must not be empty`},
		{`{"id":"p","block_size":0,"hash_id_scope":"local","requests":[]}`, `w.jsonl:1:24: block_size: block_size must be positive`},
		{`{"id":"p","hash_id_scope":"local","requests":[]}`, `w.jsonl:1:1: block_size: missing required field`},
		{`{"id":"p","block_size":4,"hash_id_scope":"local","requests":[]}`, `w.jsonl:1:1: requests: the session has no parent requests`},
		{wekaSession("p", `{"t":-1,"type":"s","model":"model","in":4,"out":1}`), `w.jsonl:1:86: requests[0].t: the timestamp must be finite and non-negative`},
		{wekaSession("p", `{"t":0,"type":"s","model":"","in":4,"out":1}`), `w.jsonl:1:107: requests[0].model: the request model must not be empty`},
		{wekaSession("p", `{"t":0,"type":"s","model":"other","in":4,"out":1}`), `w.jsonl:1:107: requests[0].model: model "other" is absent from the session's models ["model"]`},
		{wekaSession("p", `{"t":0,"type":"s","model":"model","in":0,"out":1}`), `w.jsonl:1:120: requests[0].in: a request must have input tokens`},
		{wekaSession("p", `{"t":0,"type":"s","model":"model","in":4,"out":1.5}`), `w.jsonl:1:128: requests[0].out: expected a non-negative integer, got 1.5`},
		{wekaSession("p", `{"t":0,"type":"x","model":"model","in":4,"out":1}`), `w.jsonl:1:95: requests[0].type: unknown request type "x" (want n, s or subagent)`},
		{wekaSession("p", req, `{"t":0.1,"type":"subagent","agent_id":"f","subagent_type":"E","status":"failed","requests":[]}`),
			`w.jsonl:1:219: requests[1].status: unsupported non-success subagent status "failed" for f (want completed or async_launched)`},
		{wekaSession("p", req, `{"t":0.1,"type":"subagent","agent_id":"e","subagent_type":"E","status":"completed","requests":[]}`),
			`w.jsonl:1:242: requests[1].requests: blocking subagent e has no replayable requests; external waits are not modeled`},
		{wekaSession("p", req, `{"t":0.1,"type":"subagent","agent_id":"n","subagent_type":"E","duration_ms":-1,"status":"completed","requests":[]}`),
			`w.jsonl:1:224: requests[1].duration_ms: duration_ms must be a non-negative integer`},
		{wekaSession("p", `{"t":0,"type":"subagent","agent_id":"orphan","subagent_type":"E","status":"completed","requests":[`+req+`]}`, req),
			`w.jsonl:1:81: requests[0]: subagent orphan has no preceding parent request`},
		{wekaSession("p", req) + `{"id":"q","block_size":8,"hash_id_scope":"local","requests":[]}`,
			`w.jsonl:2:24: block_size: the corpus mixes block sizes: 8 here, 4 in the first session`},
		{`{"id":"p",}`, `w.jsonl:1:11: invalid JSON: expected a string key`},
		{`[1]`, `w.jsonl:1:1: expected a weka session object, got an array`},
	}
	for _, c := range cases {
		_, err := readWekaText(t, c.text, Options{})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s\n got %v\nwant %s", c.text, err, c.want)
		}
	}
	_, err := readWekaText(t, wekaSession("p", req), Options{BlockSize: 8})
	if want := "w.jsonl:1:43: block_size: weka source block size 4 does not match the configured traffic.source.block_size 8"; err == nil || err.Error() != want {
		t.Errorf("block size assertion: %v; want %s", err, want)
	}
	_, err = readWekaText(t, wekaSession("p", req)+wekaSession("q", req), Options{Name: "one.json"})
	if want := "one.json:2:1: a .json weka source holds one session object; use a .jsonl file for several"; err == nil || err.Error() != want {
		t.Errorf(".json with two objects: %v; want %s", err, want)
	}
}

// FuzzWeka feeds arbitrary bytes to the weka reader: it never panics, every
// failure is a positioned *Error, and a success has one session per object
// with edges parallel to each turn's dependencies, all within the play.
func FuzzWeka(f *testing.F) {
	for _, name := range []string{"weka-g2-restore.jsonl", "weka-a.json", "weka-relative.json", "weka-two-plays.jsonl"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint8(0))
	}
	f.Add([]byte(wekaSession("p",
		`{"t":0.0,"type":"s","model":"model","in":8,"out":1,"hash_ids":[1,2],"api_time":1.0}`,
		`{"t":0.3,"type":"subagent","agent_id":"a","subagent_type":"Explore","duration_ms":400,"status":"completed","requests":[
			{"t":0.3,"type":"s","model":"model","in":6,"out":1,"hash_ids":[3,4],"api_time":0.2}],"models":["model"]}`,
		`{"t":1.0,"type":"s","model":"model","in":9,"out":1,"hash_ids":[1,2,5]}`,
		`{"t":0.5,"type":"s","model":"model","in":8,"out":1,"hash_ids":[1,3],"api_time":0.2}`)), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, basis uint8) {
		opt := Options{Name: "f.jsonl", Format: FormatWeka,
			NestedTimestampBasis: []string{"", BasisAbsolute, BasisRelative}[int(basis)%3]}
		w, err := Read(bytes.NewReader(data), opt)
		if err != nil {
			var te *Error
			if !errors.As(err, &te) || te.Msg == "" || te.Line < 0 || te.Line > 0 && te.Col < 1 {
				t.Fatalf("bad error %T %v", err, err)
			}
			return
		}
		for _, s := range w.Sessions {
			for i, tu := range s.Turns {
				if len(s.Edges[i]) != len(tu.Deps) {
					t.Fatalf("turn %s: %d edges for %d deps", tu.RequestID, len(s.Edges[i]), len(tu.Deps))
				}
				for _, d := range tu.Deps {
					if d < 0 || int(d) >= len(s.Turns) || int(d) == i {
						t.Fatalf("turn %s depends on %d", tu.RequestID, d)
					}
				}
				for _, c := range tu.Content {
					if c >= w.NumContentIDs {
						t.Fatalf("content id %d ≥ %d", c, w.NumContentIDs)
					}
				}
			}
		}
	})
}
