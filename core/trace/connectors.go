package trace

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// ConnectorsTraceSpec shapes the mooncake-delta trace of
// docs/model/cases.md ("Case A: connector comparison"): Sessions sessions
// written one after another, each of Turns turns; turn 0 has FirstTurnTokens
// new tokens and later turns LaterTurnTokens, each turn OutputTokens output;
// hash ids are fresh consecutive integers from 1 (tokens / BlockSize per row,
// numbered session-major); rows after turn 0 carry "delay": DelayMs.
type ConnectorsTraceSpec struct {
	Sessions, Turns, FirstTurnTokens, LaterTurnTokens, OutputTokens, BlockSize int
	DelayMs                                                                    int
}

// ConnectorsTraceDefault is the §A trace: 8 sessions × 6 turns, 256 then
// 64 new tokens, 64 output, trace block size 16, delay 200 ms. With it,
// WriteConnectorsTrace reproduces the published trace
// (traces/delta-sessions.jsonl) byte for byte; the benchmark trace is the same
// shape with 10,000 sessions.
func ConnectorsTraceDefault() ConnectorsTraceSpec {
	return ConnectorsTraceSpec{
		Sessions: 8, Turns: 6, FirstTurnTokens: 256, LaterTurnTokens: 64,
		OutputTokens: 64, BlockSize: 16, DelayMs: 200,
	}
}

// WriteConnectorsTrace writes the trace described by s. Rows look like
// Python's json.dumps with default separators (", " and ": "), keys in the
// order request_id ("s<s>t<t>"), session_id ("s<s>"), input_length,
// output_length, hash_ids, delay, one row per line each ending in "\n";
// turn-0 rows have no delay key.
func WriteConnectorsTrace(w io.Writer, s ConnectorsTraceSpec) error {
	switch {
	case s.Sessions <= 0 || s.Turns <= 0:
		return fmt.Errorf("connectors trace: sessions and turns must be positive, got %d and %d", s.Sessions, s.Turns)
	case s.BlockSize <= 0:
		return fmt.Errorf("connectors trace: block size must be positive, got %d", s.BlockSize)
	case s.FirstTurnTokens <= 0 || s.FirstTurnTokens%s.BlockSize != 0:
		return fmt.Errorf("connectors trace: first-turn tokens %d must be a positive multiple of the block size %d", s.FirstTurnTokens, s.BlockSize)
	case s.Turns > 1 && (s.LaterTurnTokens <= 0 || s.LaterTurnTokens%s.BlockSize != 0):
		return fmt.Errorf("connectors trace: later-turn tokens %d must be a positive multiple of the block size %d", s.LaterTurnTokens, s.BlockSize)
	case s.OutputTokens < 0 || s.DelayMs < 0:
		return fmt.Errorf("connectors trace: output tokens and delay must not be negative")
	}
	bw := bufio.NewWriter(w)
	var buf []byte
	next := 1
	for si := range s.Sessions {
		for t := range s.Turns {
			tokens := s.LaterTurnTokens
			if t == 0 {
				tokens = s.FirstTurnTokens
			}
			buf = append(buf[:0], `{"request_id": "s`...)
			buf = strconv.AppendInt(buf, int64(si), 10)
			buf = append(buf, 't')
			buf = strconv.AppendInt(buf, int64(t), 10)
			buf = append(buf, `", "session_id": "s`...)
			buf = strconv.AppendInt(buf, int64(si), 10)
			buf = append(buf, `", "input_length": `...)
			buf = strconv.AppendInt(buf, int64(tokens), 10)
			buf = append(buf, `, "output_length": `...)
			buf = strconv.AppendInt(buf, int64(s.OutputTokens), 10)
			buf = append(buf, `, "hash_ids": [`...)
			for j := range tokens / s.BlockSize {
				if j > 0 {
					buf = append(buf, ", "...)
				}
				buf = strconv.AppendInt(buf, int64(next), 10)
				next++
			}
			buf = append(buf, ']')
			if t > 0 {
				buf = append(buf, `, "delay": `...)
				buf = strconv.AppendInt(buf, int64(s.DelayMs), 10)
			}
			buf = append(buf, "}\n"...)
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}
