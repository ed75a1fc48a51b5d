// Package main is the browser app (main.wasm): a page of vugu components
// over the replay core, which runs in a Web Worker (sim.wasm, built from
// ../wasm). docs/ui.md describes it.
//
// The components own their state and follow vugu's own examples: each is
// a struct beside its .vugu markup, gets what it needs from its parent as
// fields, and reports up by calling its parent. Root is the page: it owns
// the browser (Host), routes the worker's replies to the component they
// answer and keeps the link in the URL. Beside it: ConfigPanel (the YAML,
// the form and its errors, with TracePanel for traces, uploads and the
// session generator, and NumField per numeric control), CompareSetup,
// RunView (runs, progress, results, downloads; with RequestTable and
// PassView) and SweepView. Root renders its components with vg-comp, so
// they keep their state while hidden (the run view while the sweep view
// shows, and back). What needs no DOM lives in ui/state and ui/draw, tested
// natively.
package main
