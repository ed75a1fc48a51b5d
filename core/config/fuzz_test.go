package config

import (
	"errors"
	"testing"
)

// FuzzParse checks that no input, document or override, makes Parse panic,
// and that every rejection is an *Error.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"connectors.yaml", "g2-restore.yaml"} {
		data := readCase(f, name)
		f.Add(data, "")
		f.Add(data, "engine.workers.aggregated.kv_cache.host_offload.connector=offloading_v0_32")
		f.Add(data, "engine.workers.aggregated.kv_cache.host_offload={num_host_blocks: 4, scope: cluster_shared}")
		f.Add(data, "traffic.stop=null")
	}
	f.Add([]byte(minimal), "engine.workers.aggregated.kv_cache.capacity.blocks=abc")
	f.Add([]byte("engine:\n  <<: &a {model: m}\n  x: *a\n"), "engine.x.y=1")
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		var overrides []string
		if set != "" {
			overrides = []string{set}
		}
		c, err := Parse("fuzz.yaml", "", data, overrides)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not *Error", err, err)
			}
			return
		}
		if c.Roles() == nil {
			t.Fatal("accepted config has no roles")
		}
	})
}
