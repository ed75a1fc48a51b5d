// Package floor holds no kvsim code: its benchmarks are plain Go kernels
// shaped like the replay's inner loops (small calls, a 64-bit hash, a map,
// a sort, index-linked lists). Run natively and under GOOS=js GOARCH=wasm
// with node, they show what Go's wasm code generator costs before any of
// kvsim's own code is involved: the floor under the bridge's wasm/native
// ratio (docs/ui.md, "Why wasm is slower").
package floor
