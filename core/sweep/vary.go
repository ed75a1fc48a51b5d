package sweep

import (
	"fmt"
	"strings"

	"github.com/kvsim/kvsim/core/config"
)

// An Error is a rejected --vary argument or sweep point. Arg is the
// argument as the user wrote it ("--vary PATH=v1,v2" or "point 3 (…)");
// Msg says what is wrong with it.
type Error struct {
	Arg string
	Msg string
	// Err is the replay error of a point that failed to run, if any.
	Err error
}

func (e *Error) Error() string { return e.Arg + ": " + e.Msg }

// Unwrap returns the point's replay error, if any.
func (e *Error) Unwrap() error { return e.Err }

// A Vary is one --vary argument split into its path and values, both as
// written.
type Vary struct {
	Path   string
	Values []string
}

// String is the argument in its --vary form.
func (v Vary) String() string { return "--vary " + v.Path + "=" + strings.Join(v.Values, ",") }

// ParseVary splits "PATH=v1,v2,…". Values are separated by commas outside
// brackets, braces and quotes, so a flow value such as {a: 1, b: 2} is one
// value. Each value is later parsed as a YAML scalar or flow value, exactly
// as a --set VALUE.
func ParseVary(arg string) (Vary, error) {
	fail := func(format string, a ...any) (Vary, error) {
		return Vary{}, &Error{Arg: "--vary " + arg, Msg: fmt.Sprintf(format, a...)}
	}
	eq := strings.IndexByte(arg, '=')
	if eq < 0 {
		return fail("expected PATH=VALUE,VALUE,…")
	}
	path, list := arg[:eq], arg[eq+1:]
	if msg := checkPath(path); msg != "" {
		return fail("%s", msg)
	}
	if strings.TrimSpace(list) == "" {
		return fail("empty list of values: give at least one value after '='")
	}
	values, msg := splitValues(list)
	if msg != "" {
		return fail("%s", msg)
	}
	seen := map[string]int{}
	for i, v := range values {
		if v == "" {
			return fail("value %d of %d is empty", i+1, len(values))
		}
		if j, ok := seen[v]; ok {
			return fail("value %q is given twice (values %d and %d)", v, j+1, i+1)
		}
		seen[v] = i
	}
	return Vary{Path: path, Values: values}, nil
}

// checkPath explains why path is not a dotted key path, or returns "".
func checkPath(path string) string {
	if path == "" {
		return "expected PATH=VALUE,VALUE,… with a nonempty PATH"
	}
	for _, k := range strings.Split(path, ".") {
		if k == "" {
			return fmt.Sprintf("invalid path %q: empty key", path)
		}
		for _, r := range k {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				return fmt.Sprintf("invalid path %q: %q is not allowed in a key (use letters, digits, _ and -)", path, r)
			}
		}
	}
	return ""
}

// splitValues splits list at top-level commas and trims each value.
func splitValues(list string) ([]string, string) {
	var out []string
	var stack []byte // open brackets
	var quote byte   // ' or " while inside a quoted scalar
	start := 0
	for i := 0; i < len(list); i++ {
		c := list[i]
		switch {
		case quote == '"' && c == '\\':
			i++ // an escaped character, whatever it is
		case quote != 0:
			if c == quote {
				// '' inside a single-quoted scalar is an escaped quote.
				if quote == '\'' && i+1 < len(list) && list[i+1] == '\'' {
					i++
				} else {
					quote = 0
				}
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			stack = append(stack, c)
		case c == ']' || c == '}':
			open := byte('[')
			if c == '}' {
				open = '{'
			}
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return nil, fmt.Sprintf("unbalanced %q at offset %d of the values", c, i)
			}
			stack = stack[:len(stack)-1]
		case c == ',' && len(stack) == 0:
			out = append(out, strings.TrimSpace(list[start:i]))
			start = i + 1
		}
	}
	if quote != 0 {
		return nil, fmt.Sprintf("unterminated %c-quoted value", quote)
	}
	if len(stack) > 0 {
		return nil, fmt.Sprintf("unclosed %q in the values", stack[len(stack)-1])
	}
	return append(out, strings.TrimSpace(list[start:])), ""
}

// Shorthands: the first key of a path that is not a full path decides
// where it goes under engine.workers.<role>.
var (
	// keys of a role: the path is relative to the role.
	roleKeys = map[string]bool{"parallelism": true, "scheduler": true, "kv_cache": true, "timing": true, "startup_seconds": true}
	// kv_cache keys that may be written without "kv_cache.".
	kvCacheShort = map[string]bool{"host_offload": true, "g3_offload": true}
	// host_offload keys that may be written alone.
	hostOffloadShort = map[string]bool{"connector": true, "num_host_blocks": true}
)

// resolve returns the full dotted paths that a --vary path stands for in
// base (see docs/sweep.md "Paths"), or a message saying why it has none.
func resolve(path string, base *config.Config) ([]string, string) {
	keys := strings.Split(path, ".")
	switch first := keys[0]; {
	case first == "traffic" || first == "engine":
		return []string{path}, ""
	case hostOffloadShort[first] && len(keys) == 1:
		path = "kv_cache.host_offload." + path
	case kvCacheShort[first]:
		path = "kv_cache." + path
	case !roleKeys[first]:
		return nil, fmt.Sprintf("unknown path: a path starts with traffic or engine, with a key of a role "+
			"(parallelism, scheduler, kv_cache, timing, startup_seconds), with host_offload or g3_offload, "+
			"or is connector or num_host_blocks; got %q", first)
	}
	roles := base.Roles()
	if strings.HasPrefix(path, "kv_cache.host_offload") || strings.HasPrefix(path, "kv_cache.g3_offload") {
		var withG2 []*config.Role
		for _, r := range roles {
			if r.KVCache.HostOffload != nil {
				withG2 = append(withG2, r)
			}
		}
		switch {
		case len(withG2) > 0:
			roles = withG2
		case base.Engine.Workers.Aggregated != nil:
			roles = []*config.Role{base.Engine.Workers.Aggregated}
		default:
			return nil, "no role of the config has host_offload: give the full path engine.workers.<role>.kv_cache.…"
		}
	}
	out := make([]string, len(roles))
	for i, r := range roles {
		out[i] = "engine.workers." + r.Name + "." + path
	}
	return out, ""
}

// overlaps tells whether setting a and setting b touch the same key: one
// path equals the other or lies below it.
func overlaps(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == b || strings.HasPrefix(b, a+".")
}
