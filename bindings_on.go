//go:build bindings

package main

// bindingsOnly is set when `wails build` compiles the binary to generate the
// frontend bindings; that run must not open or create a data directory.
const bindingsOnly = true
