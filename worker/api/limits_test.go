package api

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/replay/replaytest"
)

// TestOversizedJobsAreRefused: POST /api/replay and the listing of a sweep
// over them answer 422 with core/replay's message for the default limits,
// although the worker's own limits are tighter.
func TestOversizedJobsAreRefused(t *testing.T) {
	h := Handler()
	for name, sets := range replaytest.Oversized {
		t.Run(name, func(t *testing.T) {
			want := replay.Check(replay.Job{Name: "connectors.yaml", Config: []byte(example(t, "connectors.yaml")), Sets: sets})
			if want == nil {
				t.Fatal("replay.Check accepts the job")
			}
			for _, c := range []struct {
				url  string
				body any
			}{
				{"/api/replay", map[string]any{"example": "connectors.yaml", "set": sets}},
				{"/api/sweep", map[string]any{"example": "connectors.yaml", "set": sets, "vary": map[string]any{"connector": []string{"offloading_v0_24"}}}},
			} {
				rec := post(t, h, c.url, c.body)
				var got apiError
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
					t.Fatal(err)
				}
				if rec.Code != http.StatusUnprocessableEntity || got.Kind != kindLimit || got.Msg != want.Error() {
					t.Errorf("%s: %d %s\nwant 422 %q", c.url, rec.Code, rec.Body, want.Error())
				}
			}
		})
	}
}
