package state

import (
	"slices"
	"sync"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/traces"
)

// Focus kinds: where a guided example opens the pass view.
const (
	FocusDivergence = "divergence" // the first pass where the compared runs' blocks differ
	FocusRestore    = "restore"    // the pass where a G2 → G1 load completes
)

// An Example is a guided teaching example: a config, how to run it, two or
// three sentences that say what to look at (no figure a run computes: the
// closing paragraph, Explain, quotes those from the runs on the page), and
// where the pass view opens.
type Example struct {
	ID, Title string
	Text      []string
	// Config is the built-in config file the example starts from, Sets the
	// edits (path=value, applied with SetYAML) that make it.
	Config string
	Sets   [][2]string
	// Compare is the compare set-up, nil for a single run.
	Compare *Compare
	// Focus is where the pass view opens; for FocusDivergence, FocusRun is
	// the compared run whose first difference from the first run counts.
	Focus    string
	FocusRun int

	once sync.Once
	yaml string
}

// Examples are the built-in guided examples; the first is the default page.
var Examples = []*Example{
	{
		ID: "A192", Title: "Why the eviction order matters",
		Text: []string{
			"Eight agent sessions of six turns share a G1 of 128 blocks, so most turns find their earlier prompt only in the 192-block CPU tier (G2).",
			"All three connectors store the same prompt blocks; they differ in which G2 block they evict when the tier is full.",
		},
		Config: "connectors.yaml", Sets: [][2]string{{"engine.workers.aggregated.kv_cache.host_offload.num_host_blocks", "192"}},
		Compare: &Compare{Axis: AxisConnector, Values: slices.Clone(config.Connectors)},
		Focus:   FocusDivergence, FocusRun: 1,
	},
	{
		ID: "B", Title: "A restore from host memory",
		Text: []string{
			"A 3-block G1 holds one request at a time: \"pressure\" evicts the prefix that \"seed\" computed, but the connector had already copied it to G2.",
			"When \"restore\" arrives with the same prefix, the lookup finds it in G2 and a host-to-device copy (the H2D bar) brings its blocks back instead of recomputing them; its first token waits for the copy, at 1 GB/s.",
		},
		Config: "g2-restore.yaml", Focus: FocusRestore,
	},
	{
		ID: "BPD", Title: "A restore across prefill and decode",
		Text: []string{
			"§B split in two: a prefill worker computes each prompt, then its KV cache moves at 1 GB/s to a decode worker, which emits the token; both workers share one G2 pool of 8 blocks (scope cluster_shared).",
			"On the prefill rank, \"pressure\" again evicts the prefix of \"seed\" from G1, and \"restore\" loads it back from the shared pool (the H2D bar) instead of recomputing it.",
			"Pick the decode rank to watch each prompt arrive by KV transfer; the request table names each request's prefill and decode worker.",
		},
		Config: "g2-restore-pd.yaml", Focus: FocusRestore,
	},
	{
		ID: "A2048", Title: "Answers in G2",
		Text: []string{
			"With a 2,048-block tier the two profiles differ in what they store, not in what they evict.",
			"SimpleCPU also stores the blocks holding each answer (the cells with a dark corner), so the next turn of a session restores them; offloading v0.32 stores prompt blocks only and recomputes the answer blocks that G1 evicted.",
		},
		Config:  "connectors.yaml",
		Sets:    [][2]string{{"engine.workers.aggregated.kv_cache.host_offload.num_host_blocks", "2048"}},
		Compare: &Compare{Axis: AxisConnector, Values: []string{"offloading_v0_32", "simple_cpu_v0_32"}},
		Focus:   FocusDivergence, FocusRun: 1,
	},
	{
		ID: "R4", Title: "Four workers: round robin or KV-aware routing",
		Text: []string{
			"The eight agent sessions now run six at a time on four workers, each with a G1 of 64 blocks and its own 192-block G2 tier.",
			"Round robin sends consecutive turns of a session to different workers, where neither G1 nor the private G2 holds its history: it reuses 0.5741 of the input and recomputes 11,776 tokens.",
			"The KV router sends each turn where its prefix is cached (Dynamo's cost: prefill blocks to compute plus decode load): it reuses 0.7523, recomputes 7,010 tokens, and the mean TTFT falls from 6.69 ms to 2.81 ms. The table \"Where each session went\", under the requests, shows round robin moving every session between two workers.",
		},
		Config: "connectors.yaml",
		Sets: [][2]string{
			{"engine.workers.aggregated.parallelism.replicas", "4"},
			{"engine.workers.aggregated.kv_cache.capacity.blocks", "64"},
			{"engine.workers.aggregated.kv_cache.host_offload.num_host_blocks", "192"},
			{"traffic.load.concurrency", "6"},
		},
		Compare: &Compare{Axis: AxisRouting, Values: []string{config.RoutingRoundRobin, config.RoutingKVRouter}},
		Focus:   FocusDivergence, FocusRun: 1,
	},
}

// DefaultExample is the page's starting point
// (docs/model/cases.md ("Case A: connector comparison") at 192 host
// blocks).
func DefaultExample() *Example { return Examples[0] }

// ExampleByID finds an example, or returns nil.
func ExampleByID(id string) *Example {
	for _, e := range Examples {
		if e.ID == id {
			return e
		}
	}
	return nil
}

// YAML is the example's config text.
func (e *Example) YAML() string {
	e.once.Do(func() {
		b, err := traces.Read(e.Config)
		if err != nil {
			panic(err) // the examples are embedded; tests cover every one
		}
		text := string(b)
		for _, s := range e.Sets {
			if text, err = SetYAML(text, s[0], s[1]); err != nil {
				panic(err)
			}
		}
		e.yaml = text
	})
	return e.yaml
}

// Share is the link state that opens the example.
func (e *Example) Share() Share {
	s := Share{Example: e.ID, YAML: e.YAML()}
	if e.Compare != nil {
		c := *e.Compare
		c.Values = append([]string(nil), c.Values...)
		s.Compare = &c
	}
	return s
}
