// Package architecture holds no code, only the tests that keep kvsim's
// layers apart (docs/architecture.md, "Principles"): front ends enter the
// core through core/replay alone, and the core does no I/O.
package architecture
