package record

import (
	"errors"
	"io"
)

// A Record is a finished run's per-pass record.
type Record struct {
	Ranks    []RankID
	Blocks   []Block
	Requests []string // request ids, by global request index
	// G1Capacity and G2Capacity per rank (G2: 0 without host offload).
	G1Capacity []int
	G2Capacity []int
	passes     [][]passLog
}

type passLog struct{}

var errTODO = errors.New("not supported yet: the per-pass record is being built")

// NumPasses is the number of passes rank ran (passes count from 1).
func (r *Record) NumPasses(rank int) int { return len(r.passes[rank]) }

// Seek rebuilds rank's state at the end of pass (1-based).
func (r *Record) Seek(rank, pass int) (*Snapshot, error) { return nil, errTODO }

// WriteJSONL writes passes.jsonl: one object per pass per rank.
func (r *Record) WriteJSONL(w io.Writer) error { return errTODO }

// Decode reads passes.jsonl back into a Record.
func Decode(rd io.Reader) (*Record, error) { return nil, errTODO }
