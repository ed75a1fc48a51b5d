// Package trace owns the request population of a run: it turns a
// mooncake, mooncake-delta or agentic_mooncake JSONL trace, or a synthetic
// source, into an immutable Workload of sessions (agentic: plays) and
// turns, and it writes the shipped connector-comparison trace.
//
// The package does no file or network I/O: readers take an io.Reader and
// writers an io.Writer, so the same code runs under the CLI, in tests and
// in the browser build. It knows nothing about engines or time beyond the
// arrivals and delays a trace carries; the engine turns a Workload into
// requests (docs/model/traffic.md).
//
// Every rule whose source is the aisimulate loader
// (crates/core/src/replay/loadgen/trace.rs, driver.rs) or a Decision of
// docs/model/traffic.md is documented where it is implemented and collected in
// docs/traces.md.
package trace
