package trace

import (
	"errors"
	"strings"
	"testing"
)

// TestReadErrors pins the exact message, line and column of every
// malformed-trace case. Rows use trace block size 4 unless a case says
// otherwise.
func TestReadErrors(t *testing.T) {
	const ok = `{"output_length": 1, "hash_ids": [1]}`
	cases := []struct {
		name   string
		format string
		trace  string
		want   string
	}{
		// Semantic errors, in aisimulate's check order.
		{"missing hash_ids", "", `{"output_length": 1}`,
			"t.jsonl:1:1: hash_ids: missing required field"},
		{"null hash_ids is missing", "", `{"output_length": 1, "hash_ids": null}`,
			"t.jsonl:1:1: hash_ids: missing required field"},
		{"missing output_length", "", `{"hash_ids": [1]}`,
			"t.jsonl:1:1: output_length: missing required field"},
		{"input_length above capacity", "", `{"input_length": 9, "output_length": 1, "hash_ids": [1, 2]}`,
			"t.jsonl:1:18: input_length: 9 exceeds the hash_ids capacity 8 (2 hash ids × block size 4)"},
		{"input_tokens alias above capacity", "", `{"input_tokens": 5, "output_tokens": 1, "hash_ids": [7]}`,
			"t.jsonl:1:18: input_tokens: 5 exceeds the hash_ids capacity 4 (1 hash ids × block size 4)"},
		{"capacity checked before output_length", "", `{"input_length": 5, "hash_ids": [7]}`,
			"t.jsonl:1:18: input_length: 5 exceeds the hash_ids capacity 4 (1 hash ids × block size 4)"},
		{"output_token_ids length mismatch", "", `{"output_length": 3, "output_token_ids": [1, 2], "hash_ids": [1]}`,
			"t.jsonl:1:42: output_token_ids: has 2 ids but output_length is 3"},
		{"nonzero delay on first row", "mooncake-delta", `{"session_id": "s", "output_length": 1, "hash_ids": [1], "delay": 5}`,
			`t.jsonl:1:67: delay: nonzero delay 5 on the first turn of session "s"`},
		{"nonzero delay_ms on first row of a later session", "", ok + "\n" + `{"session_id": "b", "output_length": 1, "hash_ids": [1], "delay_ms": -0.5}`,
			`t.jsonl:2:70: delay_ms: nonzero delay -0.5 on the first turn of session "b"`},
		{"negative delay", "", `{"session_id": "s", "output_length": 1, "hash_ids": [1]}` + "\n" + `{"session_id": "s", "output_length": 1, "hash_ids": [2], "delay": -1}`,
			"t.jsonl:2:67: delay: invalid delay -1: must be finite and non-negative"},
		{"timestamp difference without previous timestamp", "", `{"session_id": "s", "output_length": 1, "hash_ids": [1]}` + "\n" + `{"session_id": "s", "timestamp": 10, "output_length": 1, "hash_ids": [2]}`,
			`t.jsonl:2:34: timestamp: cannot derive the delay of turn 1 of session "s": no earlier row of the session has a timestamp`},
		{"negative delay from timestamps", "", `{"session_id": "s", "created_time": 100, "output_length": 1, "hash_ids": [1]}` + "\n" + `{"session_id": "s", "created_time": 40.5, "output_length": 1, "hash_ids": [2]}`,
			`t.jsonl:2:37: created_time: invalid delay -59.5 (timestamp 40.5 minus the previous timestamp 100 of session "s"): must be finite and non-negative`},
		{"infinite delay from timestamps", "", `{"session_id": "s", "timestamp": -1e308, "output_length": 1, "hash_ids": [1]}` + "\n" + `{"session_id": "s", "timestamp": 1e308, "output_length": 1, "hash_ids": [2]}`,
			`t.jsonl:2:34: timestamp: invalid delay +Inf (timestamp 1e+308 minus the previous timestamp -1e+308 of session "s"): must be finite and non-negative`},

		// Wrong JSON types and out-of-range numbers.
		{"output_length string", "", `{"output_length": "1", "hash_ids": [1]}`,
			"t.jsonl:1:19: output_length: expected a non-negative integer or null, found a string"},
		{"negative output_length", "", `{"output_length": -1, "hash_ids": [1]}`,
			"t.jsonl:1:19: output_length: expected a non-negative integer, found -1"},
		{"fractional input_length", "", `{"input_length": 1.0, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:18: input_length: expected a non-negative integer, found 1.0"},
		{"exponent output_tokens", "", `{"output_tokens": 1e2, "hash_ids": [1]}`,
			"t.jsonl:1:19: output_tokens: expected a non-negative integer, found 1e2"},
		{"input_length beyond int", "", `{"input_length": 99999999999999999999, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:18: input_length: 99999999999999999999 is out of range (largest allowed 9223372036854775807)"},
		{"negative hash id", "", `{"output_length": 1, "hash_ids": [1, -2]}`,
			"t.jsonl:1:38: hash_ids[1]: expected a non-negative integer, found -2"},
		{"fractional hash id", "", `{"output_length": 1, "hash_ids": [0.5]}`,
			"t.jsonl:1:35: hash_ids[0]: expected a non-negative integer, found 0.5"},
		{"string hash id", "", `{"output_length": 1, "hash_ids": ["a"]}`,
			"t.jsonl:1:35: hash_ids[0]: expected a non-negative integer, found a string"},
		{"hash id above uint64", "", `{"output_length": 1, "hash_ids": [18446744073709551616]}`,
			"t.jsonl:1:35: hash_ids[0]: 18446744073709551616 is out of range (largest allowed 18446744073709551615)"},
		{"hash_ids not an array", "", `{"output_length": 1, "hash_ids": 5}`,
			"t.jsonl:1:34: hash_ids: expected an array of non-negative integers or null, found a number"},
		{"output token id above uint32", "", `{"output_length": 1, "output_token_ids": [4294967296], "hash_ids": [1]}`,
			"t.jsonl:1:43: output_token_ids[0]: 4294967296 is out of range (largest allowed 4294967295)"},
		{"request_id number", "", `{"request_id": 7, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:16: request_id: expected a string or null, found a number"},
		{"session_id boolean", "", `{"session_id": true, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:16: session_id: expected a string or null, found a boolean"},
		{"timestamp string", "", `{"timestamp": "0", "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:15: timestamp: expected a number or null, found a string"},
		{"delay object", "", `{"delay": {}, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:11: delay: expected a number or null, found an object"},
		{"timestamp out of float range", "", `{"timestamp": 1e999, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:15: timestamp: 1e999 is out of range for a float64"},
		{"duplicate alias", "", `{"input_length": 4, "input_tokens": 4, "output_length": 1, "hash_ids": [1]}`,
			`t.jsonl:1:21: input_tokens: duplicate field: "input_length" was already given and is the same field`},
		{"duplicate key, first null", "", `{"delay": null, "delay": 0, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:17: delay: duplicate field"},

		// Malformed JSON.
		{"not an object", "", `[1, 2]`,
			"t.jsonl:1:1: row must be a JSON object, found an array"},
		{"number row after spaces", "", `  5`,
			"t.jsonl:1:3: row must be a JSON object, found a number"},
		{"bare word", "", `hello`,
			"t.jsonl:1:1: invalid JSON: expected '{', found 'h'"},
		{"unterminated array", "", `{"output_length": 1, "hash_ids": [1, 2}`,
			"t.jsonl:1:39: invalid JSON: expected ',' or ']', found '}'"},
		{"truncated row", "", `{"output_length": 1, "hash_ids": [1`,
			"t.jsonl:1:36: invalid JSON: unexpected end of line, expected ',' or ']'"},
		{"missing colon", "", `{"output_length" 1, "hash_ids": [1]}`,
			"t.jsonl:1:18: invalid JSON: expected ':' after the key, found '1'"},
		{"unquoted key", "", `{output_length: 1}`,
			"t.jsonl:1:2: invalid JSON: expected a string key, found 'o'"},
		{"trailing comma in object", "", `{"output_length": 1, "hash_ids": [1],}`,
			"t.jsonl:1:38: invalid JSON: trailing comma before '}'"},
		{"trailing comma in array", "", `{"output_length": 1, "hash_ids": [1,]}`,
			"t.jsonl:1:37: invalid JSON: trailing comma before ']'"},
		{"trailing characters", "", `{"output_length": 1, "hash_ids": [1]} x`,
			"t.jsonl:1:39: invalid JSON: trailing characters after the row object"},
		{"two rows on one line", "", ok + ok,
			"t.jsonl:1:38: invalid JSON: trailing characters after the row object"},
		{"leading zero", "", `{"output_length": 01, "hash_ids": [1]}`,
			"t.jsonl:1:19: invalid JSON: invalid number: leading zero"},
		{"minus without digits", "", `{"output_length": -, "hash_ids": [1]}`,
			"t.jsonl:1:20: invalid JSON: invalid number: expected a digit after '-'"},
		{"dot without digits", "", `{"timestamp": 1., "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:17: invalid JSON: invalid number: expected a digit after '.'"},
		{"invalid escape in unknown field", "", `{"note": "a\x", "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:12: invalid JSON: invalid escape sequence"},
		{"control character in string", "", "{\"request_id\": \"a\tb\", \"output_length\": 1, \"hash_ids\": [1]}",
			"t.jsonl:1:18: invalid JSON: control character in a string"},
		{"lone surrogate in session_id", "", `{"session_id": "\ud800", "output_length": 1, "hash_ids": [1]}`,
			`t.jsonl:1:17: invalid JSON: lone surrogate in a \u escape`},
		{"bad literal", "", `{"session_id": nul, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:16: invalid JSON: invalid literal, expected null"},
		{"malformed unknown nested value", "", `{"meta": {"a": [1, {"b" 2}]}, "output_length": 1, "hash_ids": [1]}`,
			"t.jsonl:1:25: invalid JSON: expected ':' after the key, found '2'"},
		{"nesting too deep", "", `{"meta": ` + strings.Repeat("[", 130) + strings.Repeat("]", 130) + `}`,
			"t.jsonl:1:138: invalid JSON: nesting deeper than 128 levels"},
		{"invalid UTF-8", "", "{\"request_id\": \"\xff\", \"output_length\": 1, \"hash_ids\": [1]}",
			"t.jsonl:1:17: invalid UTF-8"},
		{"value missing at end", "", `{"output_length":`,
			"t.jsonl:1:18: invalid JSON: unexpected end of line, expected a value"},

		// Positions across lines.
		{"error after blank lines counts physical lines", "", ok + "\n\n   \n" + `{"output_length": 1}`,
			"t.jsonl:4:1: hash_ids: missing required field"},
		{"CRLF lines", "", ok + "\r\n" + `{"hash_ids": [1]}` + "\r\n",
			"t.jsonl:2:1: output_length: missing required field"},

		// Whole-file problems.
		{"empty trace", "", "",
			"t.jsonl: trace contains no rows"},
		{"blank trace", "", "\n  \n\t\n",
			"t.jsonl: trace contains no rows"},
	}
	if len(cases) < 25 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := Read(strings.NewReader(c.trace), Options{Name: "t.jsonl", Format: c.format, BlockSize: 4})
			if err == nil {
				t.Fatalf("no error; got %d sessions", len(w.Sessions))
			}
			if got := err.Error(); got != c.want {
				t.Errorf("error\n got: %s\nwant: %s", got, c.want)
			}
			var te *Error
			if !errors.As(err, &te) {
				t.Errorf("error %T is not *Error", err)
			}
		})
	}
}

func TestReadOptionErrors(t *testing.T) {
	cases := []struct {
		opt  Options
		want string
	}{
		{Options{Name: "t.jsonl", BlockSize: 0}, "t.jsonl: block_size: trace block size must be positive, got 0"},
		{Options{Name: "t.jsonl", BlockSize: -3}, "t.jsonl: block_size: trace block size must be positive, got -3"},
		{Options{Name: "t.jsonl", Format: "dynamo", BlockSize: 4}, `t.jsonl: format: unsupported trace format "dynamo" (want "mooncake", "mooncake-delta", "agentic_mooncake" or "weka")`},
		{Options{Name: "t.jsonl", Format: "weka", BlockSize: 4}, "t.jsonl: trace contains no weka session objects"},
		{Options{Name: "t.jsonl", Format: "weka", BlockSize: -1}, "t.jsonl: block_size: trace block size must be positive, got -1"},
		{Options{Name: "t.jsonl", Format: "agentic_mooncake", BlockSize: 4}, "t.jsonl: trace contains no rows"},
		{Options{BlockSize: 4}, "<trace>: trace contains no rows"},
	}
	for _, c := range cases {
		_, err := Read(strings.NewReader(""), c.opt)
		if err == nil || err.Error() != c.want {
			t.Errorf("Read(%+v) = %v, want %s", c.opt, err, c.want)
		}
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestReadNilReader(t *testing.T) {
	_, err := Read(nil, Options{Name: "t.jsonl", BlockSize: 4})
	if err == nil || err.Error() != "t.jsonl: nil reader" {
		t.Fatalf("got %v", err)
	}
}

func TestReadReaderError(t *testing.T) {
	_, err := Read(failingReader{}, Options{Name: "t.jsonl", BlockSize: 4})
	if err == nil || err.Error() != "t.jsonl: reading trace: disk on fire" {
		t.Fatalf("got %v", err)
	}
}
