//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

// main explains how the bridge is built; natively the package exists only
// for its tests.
func main() {
	fmt.Fprintln(os.Stderr, "sim.wasm is the browser bridge: GOOS=js GOARCH=wasm go build -o dist/sim.wasm ./wasm")
	os.Exit(2)
}
