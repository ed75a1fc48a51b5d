//go:build js && wasm

package main

import (
	"fmt"
	"runtime/debug"
	"syscall/js"

	"github.com/kvsim/kvsim/wasm/proto"
	"github.com/kvsim/kvsim/wasm/wire"
)

// memoryLimit is the Go runtime's soft memory limit in the worker.
const memoryLimit = 3 << 30

// windowsMemoryLimit is the soft limit while the worker holds the pass
// view's windows of a long run, and a single run's checkpoints
// (limitMemory): issue 21 bounds each Web Worker at 512 MiB, and the
// collector's goal of half again the live heap took the run worker to
// 483-520 MiB after a deep compared window move (docs/ui.md, "Window
// moves from checkpoints"). A wasm memory ends 60-90 MiB above the
// limit (the runtime counts pages it released, which a wasm memory
// keeps): at 448 MiB a single run's moves with a 200,000-block G2 tier
// still reached 533 MiB; at 400 they reach 490, a compare's 450-463.
const windowsMemoryLimit = 400 << 20

// main registers kvsimHandle and then parks, so the worker can call it for
// as long as it lives.
func main() {
	// a soft limit below the 4 GiB wasm ceiling: the GC works harder
	// before the memory has to grow again; and a collection when the heap
	// grew by half, not by all of it: a wasm memory never shrinks, and the
	// Mooncake compare's worker ended at 441-478 MiB instead of 952 MiB
	// (docs/ui.md, "When the worker dies")
	debug.SetMemoryLimit(memoryLimit)
	debug.SetGCPercent(50)
	limitMemory = func(windows bool) {
		if windows {
			debug.SetMemoryLimit(windowsMemoryLimit)
		} else {
			debug.SetMemoryLimit(memoryLimit)
		}
	}
	debugAllowed = func() bool { return js.Global().Get("kvsimDebug").Truthy() }
	js.Global().Set("kvsimHandle", js.FuncOf(handle))
	select {}
}

// handle is kvsimHandle(envelope, post): it decodes one request (a
// wire envelope), serves it synchronously (the worker has nothing else to
// do meanwhile), calls post with progress envelopes, and returns the
// reply's envelope. It never throws: every failure, a panic and a message
// that does not decode included, becomes a reply with an error. Beside
// the reply, the envelope's "next" is the run whose passes sim-worker.js
// indexes next: on every run reply (0: none, which stops the loop) and on
// an index reply that is not the last.
func handle(_ js.Value, args []js.Value) (ret any) {
	defer func() {
		if r := recover(); r != nil {
			ret = pack(failed(proto.MsgResult, 0, internalError("internal error: %v", r)))
		}
	}()
	if len(args) == 0 {
		return pack(failed(proto.MsgResult, 0, internalError("kvsimHandle needs a message")))
	}
	env, msg, err := wire.Open(args[0])
	if err != nil {
		return pack(failed(proto.MsgResult, 0, internalError("%v", err)))
	}
	req, bad := proto.DecodeRequest(msg)
	if bad != nil {
		return pack(&answer{reply: *bad})
	}
	var progress func(*answer)
	if len(args) > 1 && args[1].Type() == js.TypeFunction {
		post := args[1]
		progress = func(a *answer) { post.Invoke(pack(a)) }
	}
	return pack(serve(&req, env, progress))
}

// pack encodes an answer into its envelope.
func pack(a *answer) js.Value {
	msg, err := proto.EncodeReply(&a.reply)
	if err != nil {
		e := failed(a.reply.Type, a.reply.ID, &jobError{Kind: "internal", Msg: fmt.Sprintf("the reply did not encode: %v", err)})
		msg, _ = proto.EncodeReply(&e.reply)
		return wire.Pack(msg, nil, nil)
	}
	env := wire.Pack(msg, a.bins, a.texts)
	if a.next != 0 || a.reply.Type == proto.MsgResult {
		env.Set("next", a.next)
	}
	if a.wait > 0 {
		env.Set("wait", a.wait)
	}
	if a.quiet {
		env.Set("quiet", true)
	}
	return env
}
