//go:build js && wasm

// Package wire is the JavaScript side of the messages between the page and
// its simulation workers (wasm/proto): the envelope a message travels in
// through postMessage. An envelope is a plain object {json, bin?, text?}:
// json is the message (a proto.Request or proto.Reply, encoded once), bin
// the binary payloads its BinRefs name (Uint8Arrays) and text the texts
// its TextRefs name (JavaScript strings, which a receiver may keep as
// handles instead of copying them into Go). The page's host (ui) and the
// bridge (wasm) both use it.
package wire

import (
	"fmt"
	"syscall/js"
)

// Pack builds an envelope. A text is a js.Value (passed on as it is) or a
// string (converted once).
func Pack(msg []byte, bins [][]byte, texts []any) js.Value {
	env := js.Global().Get("Object").New()
	env.Set("json", string(msg))
	if len(bins) > 0 {
		arr := js.Global().Get("Array").New(len(bins))
		for i, b := range bins {
			arr.SetIndex(i, Bytes(b))
		}
		env.Set("bin", arr)
	}
	if len(texts) > 0 {
		arr := js.Global().Get("Array").New(len(texts))
		for i, t := range texts {
			arr.SetIndex(i, js.ValueOf(t))
		}
		env.Set("text", arr)
	}
	return env
}

// Bytes copies b into a new Uint8Array.
func Bytes(b []byte) js.Value {
	u := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(u, b)
	return u
}

// Transfer lists the buffers of an envelope's binary payloads, for
// postMessage's transfer list (they move instead of being copied).
func Transfer(env js.Value) js.Value {
	out := js.Global().Get("Array").New()
	if bin := env.Get("bin"); bin.Type() == js.TypeObject {
		for i := 0; i < bin.Length(); i++ {
			out.Call("push", bin.Index(i).Get("buffer"))
		}
	}
	return out
}

// An Envelope is a received envelope: its message and access to its
// payloads.
type Envelope struct {
	v js.Value
}

// Open reads an envelope; it fails when v is not one.
func Open(v js.Value) (Envelope, []byte, error) {
	if v.Type() != js.TypeObject {
		return Envelope{}, nil, fmt.Errorf("a message is a %s, not an envelope object", v.Type())
	}
	msg := v.Get("json")
	if msg.Type() != js.TypeString {
		return Envelope{}, nil, fmt.Errorf("a message has no json text")
	}
	return Envelope{v: v}, []byte(msg.String()), nil
}

// Bins copies every binary payload into Go (nil entries for payloads
// that are not Uint8Arrays).
func (e Envelope) Bins() [][]byte {
	bin := e.v.Get("bin")
	if bin.Type() != js.TypeObject {
		return nil
	}
	out := make([][]byte, bin.Length())
	for i := range out {
		u := bin.Index(i)
		if u.Type() != js.TypeObject || u.Get("length").Type() != js.TypeNumber {
			continue
		}
		out[i] = make([]byte, u.Get("length").Int())
		js.CopyBytesToGo(out[i], u)
	}
	return out
}

// Bin copies binary payload n (a proto.BinRef: from 1) into Go; it fails
// when the envelope has no such Uint8Array.
func (e Envelope) Bin(n int) ([]byte, error) {
	bin := e.v.Get("bin")
	if n < 1 || bin.Type() != js.TypeObject || n > bin.Length() {
		return nil, fmt.Errorf("the message has no binary payload %d", n)
	}
	u := bin.Index(n - 1)
	if u.Type() != js.TypeObject || u.Get("length").Type() != js.TypeNumber {
		return nil, fmt.Errorf("binary payload %d is not a Uint8Array", n)
	}
	out := make([]byte, u.Get("length").Int())
	js.CopyBytesToGo(out, u)
	return out, nil
}

// Texts are the envelope's texts as handles (nothing is copied).
func (e Envelope) Texts() []js.Value {
	t := e.v.Get("text")
	if t.Type() != js.TypeObject {
		return nil
	}
	out := make([]js.Value, t.Length())
	for i := range out {
		out[i] = t.Index(i)
	}
	return out
}

// Text copies text n (a proto.TextRef: from 1) into Go; it fails when the
// envelope has no such string.
func (e Envelope) Text(n int) (string, error) {
	t := e.v.Get("text")
	if n < 1 || t.Type() != js.TypeObject || n > t.Length() || t.Index(n-1).Type() != js.TypeString {
		return "", fmt.Errorf("the message has no text %d", n)
	}
	return t.Index(n - 1).String(), nil
}

// Value is the envelope object itself (for properties beside the message,
// such as an init message's module).
func (e Envelope) Value() js.Value { return e.v }
