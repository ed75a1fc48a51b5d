//go:build js && wasm

package main

import (
	"errors"
	"fmt"
	"image"
	"syscall/js"
	"time"

	"github.com/vugu/vugu"

	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
	"github.com/kvsim/kvsim/wasm/wire"
)

// jsHost is the browser side of Host: one Web Worker running sim.wasm (the
// bridge), the location fragment, Blob downloads, FileReader uploads,
// localStorage and canvases.
type jsHost struct {
	env    vugu.EventEnv
	root   *Root
	worker js.Value
	module js.Value // the compiled sim.wasm, reused by every worker
	onMsg  js.Func
	frag   string
	images map[string]js.Value // canvas id → ImageData of the right size
	playID js.Value
	playFn js.Func
	// the sweep's workers and their message handlers
	sweepers []js.Value
	sweepFns []js.Func
}

func newJSHost(env vugu.EventEnv) *jsHost {
	h := &jsHost{env: env, images: map[string]js.Value{}}
	h.onMsg = js.FuncOf(h.onMessage)
	return h
}

// attach connects the page and starts the worker and the listeners.
func (h *jsHost) attach(a *Root) {
	h.root = a
	h.startWorker()
	js.Global().Call("addEventListener", "hashchange", js.FuncOf(func(js.Value, []js.Value) any {
		defer recoverJS("callback")
		frag := js.Global().Get("location").Get("hash").String()
		if len(frag) > 0 && frag[0] == '#' {
			frag = frag[1:]
		}
		if frag == h.frag {
			return nil
		}
		h.locked(func() { a.OpenLink(frag) })
		return nil
	}))
	doc := js.Global().Get("document")
	// keyboard shortcuts (not while typing in a field)
	doc.Call("addEventListener", "keydown", js.FuncOf(func(_ js.Value, args []js.Value) any {
		defer recoverJS("callback")
		e := args[0]
		if e.Get("ctrlKey").Bool() || e.Get("metaKey").Bool() || e.Get("altKey").Bool() {
			return nil
		}
		if t := e.Get("target"); t.Truthy() {
			switch t.Get("tagName").String() {
			case "INPUT", "TEXTAREA", "SELECT":
				return nil
			}
		}
		var used bool
		h.env.Lock()
		used = a.Key(e.Get("key").String(), e.Get("shiftKey").Bool())
		if used {
			e.Call("preventDefault")
			h.env.UnlockRender()
		} else {
			h.env.UnlockOnly()
		}
		return nil
	}))
	// the pointer over the pass view's canvases: a render only when the
	// hovered cell changes
	pointer := func(click bool) js.Func {
		return js.FuncOf(func(_ js.Value, args []js.Value) any {
			defer recoverJS("callback")
			e := args[0]
			t := e.Get("target")
			v := -1
			if t.Truthy() {
				if id := t.Get("id"); id.Type() == js.TypeString && len(id.String()) > 10 && id.String()[:10] == "pv-canvas-" {
					fmtSscan(id.String()[10:], &v)
				}
			}
			// only the pass view cares; everything else returns at once
			// (a click that JS code dispatches, e.g. a download's, may
			// arrive while the app holds the render lock)
			pv := a.Runs.Passes
			if v < 0 && (!pv.Hovering() || !t.Truthy() || t.Get("closest").IsUndefined() ||
				!t.Call("closest", "#passview").Truthy()) {
				return nil
			}
			x, y := e.Get("offsetX").Int(), e.Get("offsetY").Int()
			if v >= 0 {
				// canvases may be scaled by CSS
				cw, rw := t.Get("width").Float(), t.Get("clientWidth").Float()
				if rw > 0 && cw > 0 {
					x = int(float64(x) * cw / rw)
					y = int(float64(y) * cw / rw)
				}
			}
			px, py := 0, 0
			if box := doc.Call("getElementById", "passview"); box.Truthy() {
				r := box.Call("getBoundingClientRect")
				px = e.Get("clientX").Int() - r.Get("left").Int()
				py = e.Get("clientY").Int() - r.Get("top").Int()
			}
			h.env.Lock()
			changed := pv.Hover(v, x, y, px, py, click && v >= 0)
			if click && v < 0 && pv.Pinned() {
				if tg := t; tg.Truthy() && tg.Call("closest", "#passview").Truthy() && !tg.Call("closest", ".pv-card").Truthy() {
					changed = pv.Hover(0, -1, -1, 0, 0, true) || changed
				}
			}
			if changed {
				h.env.UnlockRender()
			} else {
				h.env.UnlockOnly()
			}
			return nil
		})
	}
	// the pass view's scrubber: its frame renders when it comes, so the
	// input itself renders only when no frame will (PassView.Scrub)
	doc.Call("addEventListener", "input", js.FuncOf(func(_ js.Value, args []js.Value) any {
		defer recoverJS("callback")
		t := args[0].Get("target")
		if !t.Truthy() {
			return nil
		}
		switch t.Get("id").String() {
		case "pv-scrub":
			h.env.Lock()
			if a.Runs.Passes.Scrub(atoi(t.Get("value").String())) {
				h.env.UnlockRender()
			} else {
				h.env.UnlockOnly()
			}
		case "pv-run":
			// the whole-run scrubber moves on release (change); while it
			// is dragged its label says where it would go, no render
			h.env.Lock()
			text := a.Runs.Passes.dragLabel(atoi(t.Get("value").String()))
			h.env.UnlockOnly()
			if l := doc.Call("getElementById", "pv-run-label"); l.Truthy() {
				l.Set("textContent", text)
			}
		}
		return nil
	}))
	doc.Call("addEventListener", "mousemove", pointer(false))
	doc.Call("addEventListener", "click", pointer(true))
	var pending bool
	js.Global().Call("addEventListener", "resize", js.FuncOf(func(js.Value, []js.Value) any {
		defer recoverJS("callback")
		if pending {
			return nil
		}
		pending = true
		var f js.Func
		f = js.FuncOf(func(js.Value, []js.Value) any {
			defer recoverJS("callback")
			f.Release()
			pending = false
			h.locked(func() { a.Resized() })
			return nil
		})
		js.Global().Call("setTimeout", f, 100)
		return nil
	}))
}

// locked runs f under the render lock and asks for a render.
func (h *jsHost) locked(f func()) {
	h.env.Lock()
	defer h.env.UnlockRender()
	f()
}

// startWorker compiles sim.wasm once (a fetch that ignores the server's
// MIME type, so any static host works) and starts a worker with it.
func (h *jsHost) startWorker() {
	if !h.module.Truthy() {
		then := js.FuncOf(func(_ js.Value, args []js.Value) any {
			defer recoverJS("callback")
			h.module = args[0]
			h.newWorker()
			return nil
		})
		fail := js.FuncOf(func(_ js.Value, args []js.Value) any {
			defer recoverJS("callback")
			msg := jsErrorText(args[0])
			h.locked(func() { h.root.Fatal = "The simulator (sim.wasm) did not load: " + msg })
			return nil
		})
		js.Global().Call("fetch", "sim.wasm").
			Call("then", js.FuncOf(func(_ js.Value, args []js.Value) any {
				defer recoverJS("callback")
				r := args[0]
				if !r.Get("ok").Bool() {
					return js.Global().Get("Promise").Call("reject", js.Global().Get("Error").New("HTTP "+r.Get("status").String()))
				}
				return r.Call("arrayBuffer")
			})).
			Call("then", js.FuncOf(func(_ js.Value, args []js.Value) any {
				defer recoverJS("callback")
				return js.Global().Get("WebAssembly").Call("compile", args[0])
			})).
			Call("then", then, fail)
		return
	}
	h.newWorker()
}

func (h *jsHost) newWorker() {
	w := js.Global().Get("Worker").New("public/sim-worker.js")
	w.Set("onmessage", h.onMsg)
	w.Set("onerror", js.FuncOf(func(_ js.Value, args []js.Value) any {
		defer recoverJS("callback")
		if !w.Equal(h.worker) {
			return nil // a replaced worker's last error (its death was reported)
		}
		msg := jsErrorText(args[0])
		h.locked(func() { h.root.Runs.workerFailed(msg) })
		return nil
	}))
	h.init(w)
	h.worker = w
}

func jsErrorText(v js.Value) string {
	if v.Type() == js.TypeObject {
		if m := v.Get("message"); m.Type() == js.TypeString {
			return m.String()
		}
	}
	return v.Call("toString").String()
}

// init posts the init request to a new worker, with the compiled sim.wasm
// beside it.
func (h *jsHost) init(w js.Value) {
	msg, _ := proto.EncodeRequest(&proto.Request{Op: proto.OpInit})
	env := wire.Pack(msg, nil, nil)
	env.Set("module", h.module)
	w.Call("postMessage", env)
}

// post encodes a request and posts its envelope to worker w.
func (h *jsHost) post(w js.Value, m Message) error {
	msg, err := proto.EncodeRequest(&m.Req)
	if err != nil {
		return err
	}
	env := wire.Pack(msg, m.Bins, m.Texts)
	w.Call("postMessage", env, wire.Transfer(env))
	return nil
}

func (h *jsHost) Post(m Message) {
	if !h.worker.Truthy() {
		return
	}
	if err := h.post(h.worker, m); err != nil {
		// the caller (a component's action) holds the render lock
		h.root.Deliver(failedReply(m.Req, err, -1))
	}
}

// failedReply is the reply to a request that could not be sent.
func failedReply(req proto.Request, err error, worker int) WorkerMsg {
	return WorkerMsg{Worker: worker, Reply: proto.Reply{Type: proto.ReplyType(req.Op), ID: req.ID,
		Error: &proto.Error{Kind: "internal", Msg: "a message to the worker did not encode: " + err.Error()}}}
}

// RetireBytes is window.kvsimRetireBytes when a test set it to a positive
// number, else DefaultRetireBytes.
func (h *jsHost) RetireBytes() int64 {
	if v := js.Global().Get("kvsimRetireBytes"); v.Type() == js.TypeNumber && v.Float() > 0 {
		return int64(v.Float())
	}
	return DefaultRetireBytes
}

func (h *jsHost) RestartWorker() {
	if h.worker.Truthy() {
		h.worker.Call("terminate")
	}
	h.worker = js.Undefined()
	h.startWorker()
}

// onMessage decodes a worker message and hands it to the page.
func (h *jsHost) onMessage(_ js.Value, args []js.Value) any {
	defer recoverJS("worker message")
	h.deliver(args[0].Get("data"), -1)
	return nil
}

// PostSweep sends msg to sweep worker w, starting workers up to w with the
// compiled sim.wasm (a job posted before a worker is ready waits in
// sim-worker.js until it is).
func (h *jsHost) PostSweep(w int, m Message) {
	if !h.module.Truthy() {
		// the caller (a component's action) holds the render lock
		h.root.Sweep.failed("The simulator (sim.wasm) is still loading; try again.")
		return
	}
	for len(h.sweepers) <= w {
		h.sweepers = append(h.sweepers, js.Undefined())
	}
	if !h.sweepers[w].Truthy() {
		h.sweepers[w] = h.startSweeper(w)
	}
	if err := h.post(h.sweepers[w], m); err != nil {
		h.root.Deliver(failedReply(m.Req, err, w))
	}
}

// startSweeper starts sweep worker k with its message handler (kept
// across the workers that take slot k).
func (h *jsHost) startSweeper(k int) js.Value {
	wk := js.Global().Get("Worker").New("public/sim-worker.js")
	if len(h.sweepFns) <= k {
		h.sweepFns = append(h.sweepFns, js.FuncOf(func(_ js.Value, args []js.Value) any {
			defer recoverJS("sweep worker message")
			h.deliver(args[0].Get("data"), k)
			return nil
		}))
	}
	wk.Set("onmessage", h.sweepFns[k])
	wk.Set("onerror", js.FuncOf(func(_ js.Value, args []js.Value) any {
		defer recoverJS("sweep worker error")
		msg := jsErrorText(args[0])
		h.locked(func() { h.root.sweepWorkerFailed(msg) })
		return nil
	}))
	h.init(wk)
	return wk
}

// StopSweep terminates the sweep workers.
func (h *jsHost) StopSweep() {
	for _, wk := range h.sweepers {
		if wk.Truthy() {
			wk.Call("terminate")
		}
	}
	h.sweepers = nil
}

// RestartSweepWorker terminates sweep worker w; the next PostSweep to w
// starts a fresh one.
func (h *jsHost) RestartSweepWorker(w int) {
	if w < len(h.sweepers) && h.sweepers[w].Truthy() {
		h.sweepers[w].Call("terminate")
		h.sweepers[w] = js.Undefined()
	}
}

// Cores is navigator.hardwareConcurrency (1 when unknown).
func (h *jsHost) Cores() int {
	if n := js.Global().Get("navigator").Get("hardwareConcurrency"); n.Type() == js.TypeNumber && n.Int() > 0 {
		return n.Int()
	}
	return 1
}

// deliver decodes a worker message (from the run worker, or from sweep
// worker w >= 0) and hands it to the page. Its binary payloads are copied
// into Go; its texts stay JavaScript strings (handles).
func (h *jsHost) deliver(d js.Value, w int) {
	var m WorkerMsg
	env, msg, err := wire.Open(d)
	if err != nil {
		m = WorkerMsg{Worker: w, Reply: proto.Reply{Type: proto.MsgResult,
			Error: &proto.Error{Kind: "internal", Msg: "the page could not read a worker message: " + err.Error()}}}
	} else {
		ts := env.Texts()
		texts := make([]any, len(ts))
		for i, t := range ts {
			texts[i] = t
		}
		m = readReply(msg, env.Bins(), texts, w)
	}
	if mem := d.Get("mem"); mem.Type() == js.TypeNumber {
		m.Mem = int64(mem.Float())
	}
	h.env.Lock()
	render := h.root.Deliver(m)
	if render {
		h.env.UnlockRender()
		return
	}
	h.showProgress()
	h.env.UnlockOnly()
}

// showProgress moves the progress bar and its text in place, without a
// render of the whole page.
func (h *jsHost) showProgress() {
	doc := js.Global().Get("document")
	if bar := doc.Call("querySelector", "#progress .bar"); bar.Truthy() {
		bar.Get("style").Set("width", h.root.Runs.Pct())
	}
	if t := doc.Call("getElementById", "progress-text"); t.Truthy() {
		t.Set("textContent", h.root.Runs.ProgressMsg)
	}
	if bar := doc.Call("querySelector", "#sweep-progress .bar"); bar.Truthy() {
		bar.Get("style").Set("width", h.root.Sweep.Pct())
	}
	if t := doc.Call("getElementById", "sweep-status"); t.Truthy() {
		t.Set("textContent", h.root.Sweep.Status)
	}
}

func (h *jsHost) SetFragment(frag string) {
	if frag == h.frag {
		return
	}
	h.frag = frag
	js.Global().Get("history").Call("replaceState", js.Null(), "", "#"+frag)
}

func (h *jsHost) Location() string {
	loc := js.Global().Get("location")
	return loc.Get("origin").String() + loc.Get("pathname").String() + loc.Get("search").String()
}

func (h *jsHost) Download(name string, data any) {
	typ := "application/json"
	if len(name) > 5 && name[len(name)-5:] == ".yaml" {
		typ = "application/yaml"
	}
	parts := js.Global().Get("Array").New(1)
	parts.SetIndex(0, js.ValueOf(data))
	opts := js.Global().Get("Object").New()
	opts.Set("type", typ)
	blob := js.Global().Get("Blob").New(parts, opts)
	url := js.Global().Get("URL").Call("createObjectURL", blob)
	a := js.Global().Get("document").Call("createElement", "a")
	a.Set("href", url)
	a.Set("download", name)
	a.Set("className", "download-link")
	js.Global().Get("document").Get("body").Call("appendChild", a)
	// click from a fresh task: a synchronous click would run the page's
	// listeners inside this call, under the render lock
	var click, revoke js.Func
	click = js.FuncOf(func(js.Value, []js.Value) any {
		defer recoverJS("callback")
		click.Release()
		a.Call("click")
		a.Call("remove")
		return nil
	})
	revoke = js.FuncOf(func(js.Value, []js.Value) any {
		defer recoverJS("callback")
		js.Global().Get("URL").Call("revokeObjectURL", url)
		revoke.Release()
		return nil
	})
	js.Global().Call("setTimeout", click, 0)
	js.Global().Call("setTimeout", revoke, 30000)
}

func (h *jsHost) ReadUpload(e vugu.DOMEvent, done func(name string, text any, data []byte, err error)) {
	input := js.Value(e.JSEventTarget())
	files := input.Get("files")
	if !files.Truthy() || files.Length() == 0 {
		done("", nil, nil, errors.New("no file chosen"))
		return
	}
	f := files.Index(0)
	name := f.Get("name").String()
	f.Call("text").Call("then",
		js.FuncOf(func(_ js.Value, args []js.Value) any {
			defer recoverJS("callback")
			text := args[0]
			data := []byte(text.String())
			input.Set("value", "") // choosing the same file again fires change again
			h.locked(func() { done(name, text, data, nil) })
			return nil
		}),
		js.FuncOf(func(_ js.Value, args []js.Value) any {
			defer recoverJS("callback")
			err := fmt.Errorf("%s could not be read: %s", name, jsErrorText(args[0]))
			h.locked(func() { done(name, nil, nil, err) })
			return nil
		}))
}

// FetchTrace runs public/fetch-trace.js's kvsimFetchTrace: a streamed
// fetch with progress and a stall timer, then DecompressionStream.
func (h *jsHost) FetchTrace(url string, stall time.Duration, progress func(loaded, total int64), done func(text any, err *state.FetchError)) {
	fn := js.Global().Get("kvsimFetchTrace")
	if fn.Type() != js.TypeFunction {
		done(nil, &state.FetchError{Msg: "public/fetch-trace.js did not load"})
		return
	}
	var onProgress, onDone js.Func
	last := time.Time{}
	onProgress = js.FuncOf(func(_ js.Value, args []js.Value) any {
		defer recoverJS("callback")
		// a render per 100 ms at most: chunks can come every millisecond
		if now := time.Now(); now.Sub(last) >= 100*time.Millisecond {
			last = now
			h.locked(func() { progress(int64(args[0].Float()), int64(args[1].Float())) })
		}
		return nil
	})
	onDone = js.FuncOf(func(_ js.Value, args []js.Value) any {
		defer recoverJS("callback")
		onProgress.Release()
		onDone.Release()
		if args[0].Type() == js.TypeString {
			text := args[0]
			h.locked(func() { done(text, nil) })
			return nil
		}
		e := &state.FetchError{Status: args[1].Int(), Stalled: args[2].Bool(), Msg: args[3].String()}
		h.locked(func() { done(nil, e) })
		return nil
	})
	fn.Invoke(url, stall.Milliseconds(), onProgress, onDone)
}

// storage calls fn with localStorage, swallowing the exceptions browsers
// throw when storage is off or full.
func storage(fn func(ls js.Value)) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	ls := js.Global().Get("localStorage")
	if !ls.Truthy() {
		return false
	}
	fn(ls)
	return true
}

func (h *jsHost) SaveUpload(hash, name string, text any) {
	t, ok := text.(js.Value)
	if !ok {
		return
	}
	storage(func(ls js.Value) { ls.Call("setItem", "kvsim-trace-"+hash, t) })
}

func (h *jsHost) LoadUpload(hash string) (any, bool) {
	var v js.Value
	storage(func(ls js.Value) { v = ls.Call("getItem", "kvsim-trace-"+hash) })
	if v.Type() != js.TypeString {
		return nil, false
	}
	return v, true
}

// Blit pushes img to a canvas: one CopyBytesToJS into an ImageData the
// size of img (kept per canvas) and one putImageData.
func (h *jsHost) Blit(canvasID string, img *image.RGBA) {
	cv := js.Global().Get("document").Call("getElementById", canvasID)
	if !cv.Truthy() {
		return
	}
	w, ht := img.Rect.Dx(), img.Rect.Dy()
	if cv.Get("width").Int() != w || cv.Get("height").Int() != ht {
		cv.Set("width", w)
		cv.Set("height", ht)
	}
	ctx := cv.Call("getContext", "2d")
	id := h.images[canvasID]
	if !id.Truthy() || id.Get("width").Int() != w || id.Get("height").Int() != ht {
		id = js.Global().Get("ImageData").New(w, ht)
		h.images[canvasID] = id
	}
	js.CopyBytesToJS(id.Get("data"), img.Pix)
	ctx.Call("putImageData", id, 0, 0)
}

func (h *jsHost) Width(id string) int {
	el := js.Global().Get("document").Call("getElementById", id)
	if !el.Truthy() || !el.Get("parentElement").Truthy() {
		return 0
	}
	p := el.Get("parentElement")
	cs := js.Global().Call("getComputedStyle", p)
	pad := parsePx(cs.Get("paddingLeft").String()) + parsePx(cs.Get("paddingRight").String())
	return p.Get("clientWidth").Int() - pad
}

func parsePx(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func (h *jsHost) Copy(text string) {
	nav := js.Global().Get("navigator")
	if cb := nav.Get("clipboard"); cb.Truthy() {
		p := cb.Call("writeText", text)
		p.Call("catch", js.FuncOf(func(js.Value, []js.Value) any { return nil }))
	}
}

func (h *jsHost) Now() time.Time { return time.Now() }

// Play runs PassView.PlayTick speed times a second (or stops).
func (h *jsHost) Play(on bool, speed int) {
	if h.playID.Truthy() {
		js.Global().Call("clearInterval", h.playID)
		h.playID = js.Undefined()
	}
	if !on || speed <= 0 {
		return
	}
	if h.playFn.IsUndefined() {
		h.playFn = js.FuncOf(func(js.Value, []js.Value) any {
			defer recoverJS("callback")
			h.env.Lock()
			if h.root.Runs.Passes.PlayTick() {
				h.env.UnlockRender()
			} else {
				h.env.UnlockOnly()
			}
			return nil
		})
	}
	h.playID = js.Global().Call("setInterval", h.playFn, 1000/speed)
}

func (h *jsHost) Focus(id string) {
	if el := js.Global().Get("document").Call("getElementById", id); el.Truthy() {
		el.Call("focus")
	}
}

func (h *jsHost) SetValue(id, value string) {
	if el := js.Global().Get("document").Call("getElementById", id); el.Truthy() && el.Get("value").String() != value {
		el.Set("value", value)
	}
}

func fmtSscan(s string, v *int) {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return
		}
		n = n*10 + int(c-'0')
	}
	*v = n
}

// recoverJS ends a JavaScript callback's panic (a js.FuncOf that panics
// kills the Go program, and the page with it) with a console error.
func recoverJS(where string) {
	if r := recover(); r != nil {
		js.Global().Get("console").Call("error", "kvsim: "+where+": "+fmt.Sprint(r))
	}
}
