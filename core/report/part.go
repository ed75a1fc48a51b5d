package report

import (
	"fmt"

	"github.com/kvsim/kvsim/core/internal/pack"
	"github.com/kvsim/kvsim/core/vtime"
)

// wireRequest is a record as EncodeRecords writes it: the exported fields
// as they are, the inter-token gaps by value instead of by the id of a
// run's table.
type wireRequest struct {
	R       Request
	Gaps    []wireGap
	OpenMs  vtime.Time
	OpenRun uint32
}

type wireGap struct {
	Ms    vtime.Time
	Count uint32
}

// EncodeRecords encodes the records for which keep is true (all of them
// when keep is nil), so that another process can take them into a merged
// report (DecodeRecords): a run split across processes, each simulating
// some of its workers (docs/model/engine.md ("Sharded runs")). Nothing a
// report reads is lost: prediction.json and requests.jsonl of the decoded
// records are those of the encoded ones.
func EncodeRecords(recs []Request, keep func(*Request) bool) ([]byte, error) {
	var w []wireRequest
	for i := range recs {
		r := &recs[i]
		if keep != nil && !keep(r) {
			continue
		}
		x := wireRequest{R: *r, OpenMs: r.gapMs, OpenRun: r.gapRun}
		for _, g := range r.gaps {
			x.Gaps = append(x.Gaps, wireGap{Ms: r.values.Value(g.ID), Count: g.Count})
		}
		w = append(w, x)
	}
	b, err := pack.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encoding records: %w", err)
	}
	return b, nil
}

// DecodeRecords reads what EncodeRecords wrote. The records share one new
// table of gap values.
func DecodeRecords(b []byte) ([]Request, error) {
	var w []wireRequest
	if err := pack.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("decoding records: %w", err)
	}
	values := NewGapValues()
	out := make([]Request, len(w))
	for i := range w {
		r := &out[i]
		*r = w[i].R
		r.gapMs, r.gapRun = w[i].OpenMs, w[i].OpenRun
		if len(w[i].Gaps) > 0 || r.gapRun > 0 {
			r.values = values
			r.gaps = make([]Gap, 0, len(w[i].Gaps))
			for _, g := range w[i].Gaps {
				id := values.id(g.Ms)
				values.counts[id] += uint64(g.Count)
				values.closed += uint64(g.Count)
				r.closedGaps += g.Count
				r.gaps = append(r.gaps, Gap{ID: id, Count: g.Count})
			}
		}
	}
	return out, nil
}
