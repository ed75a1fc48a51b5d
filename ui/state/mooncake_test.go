package state

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
)

// TestMooncakePreset: the embedded preset is traces/mooncake/conversation.yaml
// (the whole hour) with a 300 s virtual-time stop, reads the fetched trace
// by the picker's path, and its note says it is cut and how to run it all.
func TestMooncakePreset(t *testing.T) {
	cut, err := config.Parse("config.yaml", "", []byte(MooncakePreset()), nil)
	if err != nil {
		t.Fatal(err)
	}
	full, err := os.ReadFile("../../traces/mooncake/conversation.yaml")
	if err != nil {
		t.Fatal(err)
	}
	whole, err := config.Parse("config.yaml", "", full, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := cut.Traffic.Stop; !st.HasMaxVirtualTime || st.MaxVirtualTimeMs != 300000 {
		t.Errorf("preset stop %+v, want 300 s of virtual time", st)
	}
	if whole.Traffic.Stop.HasMaxVirtualTime {
		t.Error("conversation.yaml is cut too")
	}
	f := FormOf(cut)
	if f.Source.Type != config.SourceTrace || f.Source.Path != MooncakeTrace || f.Source.Format != config.FormatMooncake {
		t.Errorf("preset source %+v", f.Source)
	}
	note := MooncakeNote(cut)
	for _, want := range []string{"Cut short", "300 s of virtual time", "12,031 requests", "delete the stop: line",
		"kvsim predict --config traces/mooncake/conversation.yaml"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	if n := MooncakeNote(whole); strings.Contains(n, "Cut") || !strings.Contains(n, "12,031") {
		t.Errorf("note of the whole trace %q", n)
	}
	cut.Traffic.Stop = whole.Traffic.Stop
	if !reflect.DeepEqual(cut, whole) {
		t.Errorf("the preset differs from conversation.yaml in more than its stop:\n%+v\n%+v", cut, whole)
	}
}

// TestTraceFetch: progress reads bytes of total, a failure names its
// cause (HTTP status, stall, other) and ends the fetch; Start again clears it.
func TestTraceFetch(t *testing.T) {
	var f TraceFetch
	if f.Busy() || f.Text() != "" {
		t.Error("an idle fetch is busy")
	}
	f.Start()
	f.Progress(394326, 788652)
	if got, want := f.Text(), "Fetching the Mooncake trace: 394,326 of 788,652 bytes (50 %)…"; got != want || !f.Busy() {
		t.Errorf("progress %q, want %q", got, want)
	}
	f.Progress(4096, 0)
	if got := f.Text(); got != "Fetching the Mooncake trace: 4,096 bytes…" {
		t.Errorf("progress without a size %q", got)
	}
	for _, c := range []struct {
		e    FetchError
		want string
	}{
		{FetchError{Status: 404, Msg: "Not Found"}, "the server answered HTTP 404"},
		{FetchError{Stalled: true, Msg: "stalled"}, "no data arrived for 30 s"},
		{FetchError{Msg: "Failed to fetch"}, ": Failed to fetch."},
		{FetchError{}, "unknown error"},
	} {
		f.Start()
		f.Fail(c.e)
		if f.Busy() || f.Phase != FetchFailed || !strings.Contains(f.Err, c.want) ||
			!strings.HasPrefix(f.Err, "Could not fetch the Mooncake trace (traces/conversation_trace.jsonl.gz)") ||
			!strings.Contains(f.Err, "Retry") {
			t.Errorf("%+v: %q lacks %q", c.e, f.Err, c.want)
		}
		f.Progress(1, 2) // a late progress call changes nothing
		if f.Loaded != 0 || f.Text() != "" {
			t.Error("progress after the failure was taken")
		}
	}
	f.Start()
	f.Done()
	if f.Phase != FetchDone || f.Err != "" || f.Busy() {
		t.Errorf("done %+v", f)
	}
}
