package trace

import (
	"reflect"
	"testing"
)

// Cuts are deterministic per seed, fall in 25-75 % of each lane's span of
// recorded starts, and history plus live covers every request.
func TestSnapshotCuts(t *testing.T) {
	text := wekaSession("a",
		`{"t":0.0,"type":"s","model":"model","in":8,"out":1,"hash_ids":[1,2],"api_time":0.5}`,
		`{"t":1.0,"type":"s","model":"model","in":12,"out":1,"hash_ids":[1,2,3],"api_time":0.5}`,
		`{"t":2.0,"type":"s","model":"model","in":16,"out":1,"hash_ids":[1,2,3,4],"api_time":0.5}`,
		`{"t":4.0,"type":"s","model":"model","in":20,"out":1,"hash_ids":[1,2,3,4,5]}`) +
		wekaSession("b",
			`{"t":0.0,"type":"s","model":"model","in":4,"out":1,"hash_ids":[1]}`,
			`{"t":8.0,"type":"s","model":"model","in":8,"out":1,"hash_ids":[1,2]}`)
	w := mustWeka(t, text, Options{})
	s1, c1, err := Snapshot(w, 5, 7)
	if err != nil {
		t.Fatal(err)
	}
	s2, c2, _ := Snapshot(w, 5, 7)
	if !reflect.DeepEqual(c1, c2) || !reflect.DeepEqual(s1, s2) {
		t.Fatal("the same seed gave different snapshots")
	}
	_, c3, _ := Snapshot(w, 5, 8)
	if reflect.DeepEqual(c1, c3) {
		t.Error("seeds 7 and 8 gave the same cuts")
	}
	for _, c := range c1 {
		src := &w.Sessions[c.Play]
		lo, hi := c.FirstMs+(c.LastMs-c.FirstMs)/4, c.FirstMs+3*(c.LastMs-c.FirstMs)/4
		if c.Play != c.Lane%2 || c.TStarMs < lo || c.TStarMs > hi || c.History+c.Live != len(src.Turns) {
			t.Errorf("cut %+v: want play lane mod 2, t* in [%v, %v], %d requests", c, lo, hi, len(src.Turns))
		}
		if got := len(s1.Sessions[c.Lane].Turns); got != c.Live {
			t.Errorf("lane %d runs %d requests; want %d", c.Lane, got, c.Live)
		}
	}
	// Lanes 0 and 2 replay play a with disjoint content ids.
	if a, b := s1.Sessions[0].Turns[0].Content[0], s1.Sessions[2].Turns[0].Content[0]; a == b {
		t.Errorf("lanes 0 and 2 share content id %d", a)
	}
}

// The remaining timers: a live request whose dependency is history waits
// for the recorded trigger plus delay minus t* (here the completion of
// outer:1 at 1.5 s, plus 0.5 s), at least its own recorded start minus t*.
func TestSnapshotTimers(t *testing.T) {
	w := mustWeka(t, wekaSession("a",
		`{"t":0.0,"type":"s","model":"model","in":8,"out":1,"hash_ids":[1,2],"api_time":0.5}`,
		`{"t":1.0,"type":"s","model":"model","in":12,"out":1,"hash_ids":[1,2,3],"api_time":0.5}`,
		`{"t":2.0,"type":"s","model":"model","in":16,"out":1,"hash_ids":[1,2,3,4],"api_time":0.5}`,
		`{"t":4.0,"type":"s","model":"model","in":20,"out":1,"hash_ids":[1,2,3,4,5]}`), Options{})
	for seed := uint64(0); seed < 40; seed++ {
		s, cuts, err := Snapshot(w, 1, seed)
		if err != nil {
			t.Fatal(err)
		}
		c := cuts[0]
		if c.TStarMs <= 1000 || c.TStarMs >= 2000 {
			continue
		}
		// History: outer:0 and outer:1; live: outer:2 (timer 2000 - t*,
		// its dependency ended at 1500 + 500 ms delay) and outer:3.
		if c.History != 2 || len(s.Sessions[0].Turns) != 2 || !reflect.DeepEqual(c.Primers, []int{1}) {
			t.Fatalf("seed %d: cut %+v", seed, c)
		}
		first := s.Sessions[0].Turns[0]
		if len(first.Deps) != 0 || first.ArrivalMs != 2000-c.TStarMs || first.RequestID != "lane0:a:outer:2" {
			t.Errorf("seed %d: first live request %+v; want a root at %v", seed, first, 2000-c.TStarMs)
		}
		return
	}
	t.Fatal("no seed in 0..39 cut between 1 s and 2 s")
}
