//go:build !wasm

package main

import (
	"fmt"
	"os"
)

// main explains how the app is built; natively the package exists for its
// tests (which render the page with vugu's static renderer).
func main() {
	fmt.Fprintln(os.Stderr, "main.wasm is the browser app: ./build.sh (or GOOS=js GOARCH=wasm go build -o dist/main.wasm ./ui)")
	os.Exit(2)
}
