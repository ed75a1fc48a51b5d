// Package transfer owns the timing of KV copies between tiers: private FIFO
// lanes (one per direction per DP rank) and fair-shared pools
// (docs/model/transfers.md). It computes when bytes start
// and finish moving; what a completed copy means is the caller's business.
//
// Units: time in virtual milliseconds, bandwidth in decimal GB/s, so
// 1 GB/s moves 10⁶ bytes per ms. A bandwidth of 0 means unlimited.
package transfer

import "github.com/kvsim/kvsim/core/vtime"

// Duration returns how long bytes take at bw GB/s (0 when bw is 0).
func Duration(bytes int64, bw float64) vtime.Time {
	if bw == 0 || bytes == 0 {
		return 0
	}
	return vtime.Time(float64(bytes) / (bw * 1e6))
}

// A Lane is one FIFO direction of a private link: a copy starts when both
// it is ready and the previous copy has finished.
type Lane struct {
	BandwidthGBps float64
	Tail          vtime.Time // end of the last copy submitted
}

// Submit schedules a copy of bytes that may start no earlier than ready and
// returns its start and end.
func (l *Lane) Submit(bytes int64, ready vtime.Time) (start, end vtime.Time) {
	start = max(l.Tail, ready)
	end = start + Duration(bytes, l.BandwidthGBps)
	l.Tail = end
	return start, end
}
