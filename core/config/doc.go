// Package config owns the replay configuration: it turns the YAML of an
// engine-replay run (the `predict` schema subset of ai-dynamo/aisimulate,
// docs/model/config.md) into a validated Config with every default filled
// in. Nothing downstream sees YAML, and nothing here does I/O: Parse gets
// the bytes, and relative trace paths stay relative to Config.Dir.
//
// Reading guide:
//
//   - types.go: the Config the engine reads.
//   - parse.go: Parse, the document, the order of the checks.
//   - override.go: --set PATH=VALUE, applied to the AST before decoding.
//   - yaml.go: the strict AST walker (mappings, scalars, anchors, aliases,
//     merge keys) and error positions.
//   - traffic.go, engine.go: the schema, one function per YAML block.
//   - check.go: rules that relate traffic to the engine.
//
// Decoding walks goccy/go-yaml's AST directly instead of unmarshalling
// into structs, so that every rejection carries file:line:column and the
// dotted field path, unknown and duplicate keys are caught, and integers
// are told apart from floats. docs/config.md lists the accepted subset.
package config
