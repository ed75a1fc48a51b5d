package traces

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"testing"
)

// TestMooncakeTraceUnchanged: traces/mooncake/conversation_trace.jsonl is
// the Mooncake release's file byte for byte (the sha256 its README records).
func TestMooncakeTraceUnchanged(t *testing.T) {
	b, err := os.ReadFile("mooncake/" + MooncakeTrace)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != "b8cbb061a85206d729d91cdc2981f43c9e0d99209dce588d3af5f7934408b9df" || len(b) != 3029533 {
		t.Errorf("conversation_trace.jsonl: %d bytes, sha256 %s", len(b), got)
	}
}

// TestMooncakeOnlyPresetEmbedded: the package embeds the preset and not
// the trace (e2e TestMooncakeNotEmbedded checks the built wasm files).
func TestMooncakeOnlyPresetEmbedded(t *testing.T) {
	preset, err := os.ReadFile("mooncake/preset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if MooncakeConfig != string(preset) {
		t.Error("MooncakeConfig is not mooncake/preset.yaml")
	}
	if slices.Contains(Names(), MooncakeTrace) {
		t.Error("the example files hold the Mooncake trace")
	}
	if _, err := FS.Open("mooncake/" + MooncakeTrace); err == nil {
		t.Error("the embedded files hold the Mooncake trace")
	}
}
