package state

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/traces"
)

// The built-in Mooncake conversation trace (traces/mooncake/): the page
// embeds only its preset config; the trace itself is fetched, gzipped,
// from the site (traces.MooncakeTraceGz) when it is picked.
const (
	// MooncakeTrace is the trace picker's value for it and the path the
	// preset reads (the fetched text is attached under this path).
	MooncakeTrace = traces.MooncakeTrace
	// MooncakeURL is where the page fetches it, relative to the page.
	MooncakeURL = traces.MooncakeTraceGz
	// MooncakeLabel is its name in the trace picker.
	MooncakeLabel = "Mooncake conversation (12,031 requests)"
	// MooncakeRequests is the number of requests in the whole trace.
	MooncakeRequests = 12031
	// FetchStall is how long a fetch may receive nothing before the page
	// gives up on it.
	FetchStall = 30 * time.Second
)

// MooncakePreset is the config the Mooncake choice loads
// (traces/mooncake/preset.yaml).
func MooncakePreset() string { return traces.MooncakeConfig }

// Fetch phases.
const (
	FetchIdle    = iota // not asked for
	FetchLoading        // under way
	FetchDone           // the text is here
	FetchFailed         // failed or stalled: Retry
)

// A TraceFetch follows the download of a built-in trace the page does not
// embed.
type TraceFetch struct {
	Phase         int
	Loaded, Total int64 // bytes of the gzipped file received, and its size (0: unknown)
	Err           string
}

// Start begins (or restarts) the fetch.
func (f *TraceFetch) Start() { *f = TraceFetch{Phase: FetchLoading} }

// Progress records the bytes received so far.
func (f *TraceFetch) Progress(loaded, total int64) {
	if f.Phase == FetchLoading {
		f.Loaded, f.Total = loaded, total
	}
}

// A FetchError is how a fetch failed: an HTTP status (0: none), a stall
// (no byte for FetchStall), or another failure's text (network,
// decompression).
type FetchError struct {
	Status  int
	Stalled bool
	Msg     string
}

// Fail ends the fetch with the page's message for e.
func (f *TraceFetch) Fail(e FetchError) {
	f.Phase, f.Err = FetchFailed, FetchMessage(e)
}

// Done ends the fetch successfully.
func (f *TraceFetch) Done() { f.Phase, f.Err = FetchDone, "" }

// Busy tells whether the fetch is under way (Run waits for it).
func (f *TraceFetch) Busy() bool { return f.Phase == FetchLoading }

// Text is the progress line shown while fetching.
func (f *TraceFetch) Text() string {
	if f.Phase != FetchLoading {
		return ""
	}
	if f.Total > 0 {
		return fmt.Sprintf("Fetching the Mooncake trace: %s of %s bytes (%d %%)…", Thousands(f.Loaded), Thousands(f.Total),
			f.Loaded*100/f.Total)
	}
	return fmt.Sprintf("Fetching the Mooncake trace: %s bytes…", Thousands(f.Loaded))
}

// FetchMessage is the page's message for a failed fetch of the Mooncake
// trace.
func FetchMessage(e FetchError) string {
	why := e.Msg
	switch {
	case e.Stalled:
		why = fmt.Sprintf("no data arrived for %d s", int(FetchStall/time.Second))
	case e.Status != 0:
		why = fmt.Sprintf("the server answered HTTP %d", e.Status)
	case why == "":
		why = "unknown error"
	}
	return fmt.Sprintf("Could not fetch the Mooncake trace (%s): %s. Retry, or run it with the CLI: kvsim predict --config traces/mooncake/preset.yaml",
		MooncakeURL, why)
}

// MooncakeNote says how much of the trace a config reading it runs: the
// preset is cut in virtual time so the page's run is quick.
func MooncakeNote(cfg *config.Config) string {
	if cfg == nil {
		return ""
	}
	if st := cfg.Traffic.Stop; st.HasMaxVirtualTime {
		return fmt.Sprintf("Cut short: this run stops at %s s of virtual time (traffic.stop.max_virtual_time_seconds) of the trace's hour. "+
			"To run all %s requests, delete the stop: line in the YAML and Run (slower), or run "+
			"kvsim predict --config traces/mooncake/conversation.yaml.",
			strconv.FormatFloat(float64(st.MaxVirtualTimeMs)/1000, 'f', -1, 64), Thousands(MooncakeRequests))
	}
	return fmt.Sprintf("The whole trace: %s requests over an hour of virtual time.", Thousands(MooncakeRequests))
}
