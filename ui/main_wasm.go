//go:build wasm

package main

import (
	"syscall/js"
	"time"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/domrender"
)

// main mounts the page and runs vugu's render loop. Worker replies and
// other asynchronous events take the render lock and request a render
// (host_js.go); after each render the chart is redrawn if its data
// changed.
func main() {
	renderer, err := domrender.New("#vugu_mount_point")
	if err != nil {
		panic(err)
	}
	defer renderer.Release()
	if q := js.Global().Get("kvsimQuietRender"); q.Type() == js.TypeFunction {
		q.Invoke() // public/quiet-render.js: renders write only what changed
	}
	env := renderer.EventEnv()
	buildEnv, err := vugu.NewBuildEnv(env)
	if err != nil {
		panic(err)
	}
	h := newJSHost(env)
	root := NewRoot(h, js.Global().Get("location").Get("hash").String())
	h.attach(root)
	// kvsimRenders counts renders and kvsimRenderMs holds the last one's
	// duration (build + DOM sync + canvas), for tests and docs/ui.md.
	renders := 0
	for ok := true; ok; ok = renderer.EventWait() {
		start := time.Now()
		if err := renderer.Render(buildEnv.RunBuild(root)); err != nil {
			panic(err)
		}
		env.Lock()
		root.AfterRender()
		env.UnlockOnly()
		renders++
		js.Global().Set("kvsimRenders", renders)
		js.Global().Set("kvsimRenderMs", float64(time.Since(start).Microseconds())/1000)
	}
}
