package main

import (
	"image"
	"time"

	"github.com/vugu/vugu"
)

// Host is everything the page needs from the browser: the simulation
// worker, the URL, downloads, files, storage and canvases. host_js.go
// implements it with syscall/js; tests use a recording fake, so the
// components' logic runs natively.
type Host interface {
	// Post sends a job to the simulation worker. Replies come back through
	// Root.Deliver, under the render lock; when Deliver asks for no render
	// (progress), the host updates the progress bar in place.
	Post(msg map[string]any)
	// RestartWorker terminates the worker (cancelling its job) and starts
	// a new one.
	RestartWorker()
	// PostSweep sends a job to sweep worker w (0, 1, …), starting it if
	// needed; its replies come back through Root.Deliver with Worker set.
	// StopSweep terminates every sweep worker. Cores is the number of
	// workers the browser suggests (navigator.hardwareConcurrency).
	PostSweep(w int, msg map[string]any)
	StopSweep()
	Cores() int
	// SetFragment replaces the URL's fragment without a navigation.
	SetFragment(frag string)
	// Download offers data (a string, or a text handle a worker message
	// carried) as a file.
	Download(name string, data any)
	// ReadUpload reads the file a file input's change event selected and
	// calls done (under the render lock) with its name, its text handle and
	// its bytes.
	ReadUpload(e vugu.DOMEvent, done func(name string, text any, data []byte, err error))
	// SaveUpload and LoadUpload keep uploaded traces across reloads (by
	// hash), as far as the browser's storage allows (the page saves
	// traces up to MaxStoredTrace bytes).
	SaveUpload(hash, name string, text any)
	LoadUpload(hash string) (text any, ok bool)
	// Blit draws img on the canvas with the given element id: one copy of
	// its pixels to JavaScript and one putImageData.
	Blit(canvasID string, img *image.RGBA)
	// Width is the content width of an element's parent in CSS pixels
	// (0 when unknown): canvases are drawn at the size they are shown.
	Width(elementID string) int
	// Play starts (or stops) the pass view's playback timer:
	// PassView.PlayTick is called speed times a second under the render
	// lock.
	Play(on bool, speed int)
	// Focus focuses an element.
	Focus(id string)
	// Copy puts text on the clipboard.
	Copy(text string)
	// Location is the page's URL without the fragment.
	Location() string
	Now() time.Time
}

// ErrInfo is an error as the worker reports it (proto: kind, msg, path,
// line, col, variant).
type ErrInfo struct {
	Kind, Msg, Path, Variant string
	Line, Col                int
}

// WorkerMsg is one message from the worker, decoded from its JavaScript
// object by the host.
type WorkerMsg struct {
	Type                           string
	ID                             int
	Variant, Variants, Done, Total int
	Results                        []VariantMsg
	Info                           string // a trace check's TraceInfo JSON
	Text                           any    // a report file's text handle
	Err                            *ErrInfo
	// Passes is the results' proto.PassMeta list (JSON) when runs kept
	// per-pass records.
	Passes string
	// index progress
	IndexDone bool
	Indexed   int
	// Ms is a duration the worker measured (the index's total step time).
	Ms        float64
	Timelines [][][]byte // [run][rank] proto.EncodeTimeline
	// seek reply
	Frames []*FrameMsg
	// sweep replies: the sweep worker that answered, the point index, the
	// plan, point and curves JSON, and the texts (handles) of a point's
	// summary and of the sweep's files
	Worker, Index       int
	Plan, Point, Curves string
	Summary, CSV, JSON  any
}

// FrameMsg is one run's frame of a seek reply.
type FrameMsg struct {
	Bin  []byte
	Meta string
	Err  string
}

// VariantMsg is one run's result. The report texts stay JavaScript strings
// (opaque handles here) until they are downloaded.
type VariantMsg struct {
	Label      string
	View       string // proto.View JSON
	Rows       []byte // proto.EncodeRows
	Err        *ErrInfo
	Prediction any
	RecordNote string
}

// nopHost records what the page asks of the browser; tests (and native
// renders) use it.
type nopHost struct {
	posted    []map[string]any
	swept     []sweepPost
	stopped   int
	frag      string
	downloads []string
	width     int
	playing   bool
}

func (h *nopHost) Post(msg map[string]any)                                    { h.posted = append(h.posted, msg) }
func (h *nopHost) RestartWorker()                                             {}
func (h *nopHost) PostSweep(w int, msg map[string]any)                        { h.swept = append(h.swept, sweepPost{w, msg}) }
func (h *nopHost) StopSweep()                                                 { h.stopped++ }
func (h *nopHost) Cores() int                                                 { return 2 }
func (h *nopHost) SetFragment(f string)                                       { h.frag = f }
func (h *nopHost) Download(name string, _ any)                                { h.downloads = append(h.downloads, name) }
func (h *nopHost) ReadUpload(vugu.DOMEvent, func(string, any, []byte, error)) {}
func (h *nopHost) SaveUpload(string, string, any)                             {}
func (h *nopHost) LoadUpload(string) (any, bool)                              { return nil, false }
func (h *nopHost) Blit(string, *image.RGBA)                                   {}
func (h *nopHost) Copy(string)                                                {}
func (h *nopHost) Play(on bool, _ int)                                        { h.playing = on }
func (h *nopHost) Focus(string)                                               {}
func (h *nopHost) Width(string) int                                           { return h.width }
func (h *nopHost) Location() string                                           { return "http://127.0.0.1/" }
func (h *nopHost) Now() time.Time                                             { return time.Unix(0, 0) }

// last is the last message posted.
func (h *nopHost) last() map[string]any {
	if len(h.posted) == 0 {
		return nil
	}
	return h.posted[len(h.posted)-1]
}

// sweepPost is one message to a sweep worker.
type sweepPost struct {
	w   int
	msg map[string]any
}
