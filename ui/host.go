package main

import (
	"cmp"
	"image"
	"time"

	"github.com/vugu/vugu"

	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// Host is everything the page needs from the browser: the simulation
// worker, the URL, downloads, files, storage and canvases. host_js.go
// implements it with syscall/js; tests use a recording fake, so the
// components' logic runs natively.
type Host interface {
	// Post sends a job to the simulation worker. Replies come back through
	// Root.Deliver, under the render lock; when Deliver asks for no render
	// (progress), the host updates the progress bar in place.
	Post(msg Message)
	// RestartWorker terminates the worker (cancelling its job) and starts
	// a new one.
	RestartWorker()
	// RetireBytes is the wasm memory size above which a worker (the run
	// worker, or a sweep worker) is replaced before its next job
	// (DefaultRetireBytes unless a test sets window.kvsimRetireBytes).
	RetireBytes() int64
	// PostSweep sends a job to sweep worker w (0, 1, …), starting it if
	// needed; its replies come back through Root.Deliver with Worker set.
	// StopSweep terminates every sweep worker; RestartSweepWorker
	// terminates sweep worker w, and PostSweep starts a fresh one in its
	// place. Cores is the number of workers the browser suggests
	// (navigator.hardwareConcurrency).
	PostSweep(w int, msg Message)
	StopSweep()
	RestartSweepWorker(w int)
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
	// FetchTrace fetches a gzipped trace from the site (url relative to
	// the page), calls progress with the bytes received so far and the
	// file's size (0: unknown), decompresses it (DecompressionStream) and
	// calls done with its text handle, or with the failure: an HTTP
	// status, no byte for stall, or another error. Both run under the
	// render lock.
	FetchTrace(url string, stall time.Duration, progress func(loaded, total int64), done func(text any, err *state.FetchError))
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
	// SetValue sets a text control's value when it differs. The YAML box
	// is filled this way, not through vugu: vugu sends a property in one
	// instruction of its 16 KB buffer, and a longer config would end the
	// page's Go program.
	SetValue(id, value string)
	// Copy puts text on the clipboard.
	Copy(text string)
	// Location is the page's URL without the fragment.
	Location() string
	Now() time.Time
}

// A Message is a request to a worker and the texts its TextRefs name
// (uploaded traces, point summaries): JavaScript strings in the browser,
// which the host passes on without copying them into Go.
type Message struct {
	Req   proto.Request
	Texts []any
	// Bins are the binary payloads its BinRefs name (a merge's parts).
	Bins [][]byte
}

// text adds a text to the message.
func (m *Message) text(t any) proto.TextRef {
	m.Texts = append(m.Texts, t)
	return proto.TextRef(len(m.Texts))
}

// WorkerMsg is one reply from a worker as the host received it: the
// decoded reply, the binary payloads its BinRefs name and the texts its
// TextRefs name (report files and summaries: JavaScript strings in the
// browser, kept as handles until they are downloaded or sent back).
type WorkerMsg struct {
	proto.Reply
	// Worker is the sweep worker that answered (-1: the run worker).
	Worker int
	Bins   [][]byte
	Texts  []any
	// Mem is the size in bytes of the worker's wasm memory when it
	// answered (0: not known).
	Mem int64
}

// readReply decodes a reply (a reply that does not decode carries the
// error instead, proto.DecodeReply).
func readReply(msg []byte, bins [][]byte, texts []any, worker int) WorkerMsg {
	return WorkerMsg{Reply: proto.DecodeReply(msg), Worker: worker, Bins: bins, Texts: texts}
}

// Bin is binary payload r (nil when the message has none).
func (m *WorkerMsg) Bin(r proto.BinRef) []byte {
	if r < 1 || int(r) > len(m.Bins) {
		return nil
	}
	return m.Bins[r-1]
}

// Text is text r (nil when the message has none).
func (m *WorkerMsg) Text(r proto.TextRef) any {
	if r < 1 || int(r) > len(m.Texts) {
		return nil
	}
	return m.Texts[r-1]
}

// nopHost records what the page asks of the browser; tests (and native
// renders) use it.
type nopHost struct {
	posted        []Message
	swept         []sweepPost
	stopped       int
	frag          string
	downloads     []string
	width         int
	playing       bool
	restarts      int
	sweepRestarts []int // the sweep workers restarted, in order
	retire        int64
	values        map[string]string
	fetches       []fetchCall
}

// fetchCall is one FetchTrace call the fake host holds; a test finishes
// it by calling its functions.
type fetchCall struct {
	url      string
	progress func(loaded, total int64)
	done     func(text any, err *state.FetchError)
}

func (h *nopHost) FetchTrace(url string, _ time.Duration, progress func(int64, int64), done func(any, *state.FetchError)) {
	h.fetches = append(h.fetches, fetchCall{url, progress, done})
}

func (h *nopHost) Post(msg Message)                                           { h.posted = append(h.posted, msg) }
func (h *nopHost) RestartWorker()                                             { h.restarts++ }
func (h *nopHost) RetireBytes() int64                                         { return cmp.Or(h.retire, DefaultRetireBytes) }
func (h *nopHost) PostSweep(w int, msg Message)                               { h.swept = append(h.swept, sweepPost{w, msg}) }
func (h *nopHost) StopSweep()                                                 { h.stopped++ }
func (h *nopHost) RestartSweepWorker(w int)                                   { h.sweepRestarts = append(h.sweepRestarts, w) }
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
func (h *nopHost) SetValue(id, v string)                                      { h.values = map[string]string{id: v} }
func (h *nopHost) Width(string) int                                           { return h.width }
func (h *nopHost) Location() string                                           { return "http://127.0.0.1/" }
func (h *nopHost) Now() time.Time                                             { return time.Unix(0, 0) }

// last is the request last posted (its zero value before any).
func (h *nopHost) last() proto.Request {
	if len(h.posted) == 0 {
		return proto.Request{}
	}
	return h.posted[len(h.posted)-1].Req
}

// sweepPost is one message to a sweep worker.
type sweepPost struct {
	w   int
	msg Message
}
