package proto

import (
	"encoding/binary"
	"errors"
	"math"
)

// Timeline markers: the kinds of events the pass view's timeline ticks
// and its "next event" buttons jump between.
const (
	MarkG1Evict = iota // g1_evict
	MarkG2Evict        // g2_evict
	MarkStore          // d2h_submit
	MarkRestore        // h2d_complete
	MarkPreempt        // preempt
	MarkAdmit          // admit
	NumMarks
)

// MarkNames are the markers' labels.
var MarkNames = [NumMarks]string{"G1 eviction", "G2 eviction", "store (D2H)", "restore (H2D)", "preemption", "admission"}

// Frame cell flashes: what happened to a cell in the pass shown.
const (
	FlashNone     byte = 0
	FlashEvicted  byte = 1 // a G1 slot whose idle copy was evicted
	FlashRestored byte = 2 // a G1 slot holding a block an H2D copy just brought back
	FlashStored   byte = 3 // a G2 entry a D2H copy just completed
)

// SlotBytes is the size of one encoded cell.
const SlotBytes = 28

// MaxFrameEvents bounds the events a frame lists: every event of a pass is
// reachable in the page up to this many.
const MaxFrameEvents = 5000

// PassMeta describes one variant's record (nil-equivalent when the
// variant kept none).
type PassMeta struct {
	Recorded  bool       `json:"recorded"`
	BlockSize int        `json:"block_size"`
	Ranks     []RankMeta `json:"ranks"`
	// Connector is the run's G2 connector profile ("" without G2).
	Connector string `json:"connector,omitempty"`
	// Warmup tells whether the run had an agentic warmup whose barrier
	// opened, at BarrierMs (the record's absolute time; the report's
	// times start there). Each rank's first Prep passes came before it:
	// they are the preparation's (docs/model/agentic.md, "Warmup").
	Warmup    bool    `json:"warmup,omitempty"`
	BarrierMs float64 `json:"barrier_ms,omitempty"`
	// Stopped: the run stopped once every rank had run the kept window
	// (RunJob.PassesOnly), so each rank's Ran counts its passes up to
	// there, not the whole run's.
	Stopped bool `json:"stopped,omitempty"`
}

// RankMeta is one DP rank of a record.
type RankMeta struct {
	Worker int    `json:"worker"`
	Rank   int    `json:"rank"`
	Role   string `json:"role"`
	Passes int    `json:"passes"`
	Lines  int    `json:"lines"` // Passes, plus one when changes trail the last pass
	// First is the first pass the record keeps (1, or a window's first);
	// Ran is how many passes the rank ran (more than Passes when the
	// record keeps only a window of a long run).
	First int `json:"first"`
	Ran   int `json:"ran"`
	G1    int `json:"g1"`
	G2    int `json:"g2"` // 0 without a G2 tier
	// Prep counts the rank's preparation passes (agentic warmup: the
	// passes that started before the barrier; they come first).
	Prep int `json:"prep,omitempty"`
}

// Timeline is one rank's passes as the timeline draws them.
type Timeline struct {
	// First is the pass of index 0 (1, or a windowed record's first pass):
	// Start[i] is pass First+i's start.
	First      int
	Start, End []float64
	Counts     [][NumMarks]uint16
	Transfers  []Transfer
	// Diverge is the first pass where this run's cached blocks differ
	// from the first run's (compare mode; 0: none found).
	Diverge int
}

// Transfer is one copy between the tiers, for the transfer lanes.
type Transfer struct {
	H2D                        bool
	Blocks                     int
	Submit, Deadline, Complete float64 // ms; Complete is NaN while in flight at the run end
	Pass                       int     // the pass that submitted it
}

// FrameMeta is a frame's pass information and events.
type FrameMeta struct {
	Pass           int     `json:"pass"`
	Final          bool    `json:"final,omitempty"`
	StartMs        float64 `json:"start_ms"`
	ComputeStartMs float64 `json:"compute_start_ms"`
	EndMs          float64 `json:"end_ms"`
	// Bound is what limited a roofline or trained_physics pass.
	Bound     string      `json:"bound,omitempty"`
	Scheduled int         `json:"scheduled"`
	Work      []Work      `json:"work,omitempty"`
	NumEvents int         `json:"n_events"`
	Events    []EventLine `json:"events,omitempty"`
	// G2Next are the next G2 victims in eviction order (at most
	// MaxNextVictims), G2Evictable how many entries can be evicted now.
	G2Next      []string `json:"g2_next,omitempty"`
	G2Evictable int      `json:"g2_evictable,omitempty"`
}

// MaxNextVictims bounds FrameMeta.G2Next.
const MaxNextVictims = 12

// Work is one scheduled request of a pass.
type Work struct {
	Request string `json:"request"`
	Tokens  int    `json:"tokens"`
	Prefill int    `json:"prefill"`
}

// EventLine is one event of a pass, described for people.
type EventLine struct {
	Kind    string `json:"kind"`
	Request string `json:"request,omitempty"` // the request it concerns, for the event filter
	Text    string `json:"text"`
}

// Cell is one G1 slot or G2 entry of a frame.
type Cell struct {
	State   byte   // record.Slot* or record.Entry* character
	Flash   byte   // Flash*
	Answer  bool   // the block holds answer (decode) tokens: past its request's prompt
	Session int32  // hue index, -1 without a block
	Order   int32  // eviction position (0 = next victim), -1
	Since   int32  // pass since which the slot holds this (G1), -1
	Owner   int32  // index into Frame.Strings of the owning request, -1
	Key     uint32 // hash of the block name, 0 without a block
	Name    int32  // index into Frame.Strings of the block name, -1
}

// Frame is one decoded pass of one run.
type Frame struct {
	G1, G2  []Cell
	Strings []string
}

// DecodeFrame reads the worker's binary frame.
func DecodeFrame(b []byte, f *Frame) error {
	bad := errors.New("malformed frame")
	if len(b) < 8 {
		return bad
	}
	n1, n2 := int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:]))
	p := b[8:]
	if n1 < 0 || n2 < 0 || len(p) < (n1+n2)*SlotBytes+4 {
		return bad
	}
	cells := func(n int, dst []Cell) []Cell {
		if cap(dst) < n {
			dst = make([]Cell, n)
		}
		dst = dst[:n]
		for i := range dst {
			c := &dst[i]
			c.State, c.Flash, c.Answer = p[0], p[1], p[2]&1 != 0
			c.Session = int32(binary.LittleEndian.Uint32(p[4:]))
			c.Order = int32(binary.LittleEndian.Uint32(p[8:]))
			c.Since = int32(binary.LittleEndian.Uint32(p[12:]))
			c.Owner = int32(binary.LittleEndian.Uint32(p[16:]))
			c.Key = binary.LittleEndian.Uint32(p[20:])
			c.Name = int32(binary.LittleEndian.Uint32(p[24:]))
			p = p[SlotBytes:]
		}
		return dst
	}
	f.G1 = cells(n1, f.G1)
	f.G2 = cells(n2, f.G2)
	ns := int(binary.LittleEndian.Uint32(p))
	// The names are substrings of one string (a frame of the Mooncake
	// trace names up to 40,000 blocks: one allocation, not one each).
	p = p[4:]
	all, off := string(p), 0
	f.Strings = f.Strings[:0]
	for i := 0; i < ns; i++ {
		l, k := binary.Uvarint(p[off:])
		if k <= 0 || uint64(len(p)-off-k) < l {
			return bad
		}
		off += k
		f.Strings = append(f.Strings, all[off:off+int(l)])
		off += int(l)
	}
	if off != len(p) {
		return bad
	}
	return nil
}

// Str is Strings[i], or "" for -1.
func (f *Frame) Str(i int32) string {
	if i < 0 || int(i) >= len(f.Strings) {
		return ""
	}
	return f.Strings[i]
}

// EncodeTimeline packs a timeline: the pass count, per pass start, end
// and the marker counts, the divergence, then the transfers.
func EncodeTimeline(t *Timeline) []byte {
	n := len(t.Start)
	b := make([]byte, 0, 16+n*(16+2*NumMarks)+len(t.Transfers)*34)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	b = binary.LittleEndian.AppendUint32(b, uint32(t.Diverge))
	b = binary.LittleEndian.AppendUint32(b, uint32(t.First))
	for i := 0; i < n; i++ {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(t.Start[i]))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(t.End[i]))
		for _, c := range t.Counts[i] {
			b = binary.LittleEndian.AppendUint16(b, c)
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(t.Transfers)))
	for _, tr := range t.Transfers {
		var h byte
		if tr.H2D {
			h = 1
		}
		b = append(b, h, 0)
		b = binary.LittleEndian.AppendUint32(b, uint32(tr.Blocks))
		b = binary.LittleEndian.AppendUint32(b, uint32(tr.Pass))
		for _, f := range []float64{tr.Submit, tr.Deadline, tr.Complete} {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
		}
	}
	return b
}

// DecodeTimeline reverses EncodeTimeline.
func DecodeTimeline(b []byte) (*Timeline, error) {
	bad := errors.New("malformed timeline")
	if len(b) < 12 {
		return nil, bad
	}
	n := int(binary.LittleEndian.Uint32(b))
	t := &Timeline{Diverge: int(binary.LittleEndian.Uint32(b[4:])), First: int(binary.LittleEndian.Uint32(b[8:]))}
	p := b[12:]
	const per = 16 + 2*NumMarks
	if n < 0 || len(p) < n*per+4 {
		return nil, bad
	}
	t.Start, t.End, t.Counts = make([]float64, n), make([]float64, n), make([][NumMarks]uint16, n)
	for i := 0; i < n; i++ {
		t.Start[i] = math.Float64frombits(binary.LittleEndian.Uint64(p))
		t.End[i] = math.Float64frombits(binary.LittleEndian.Uint64(p[8:]))
		for k := range t.Counts[i] {
			t.Counts[i][k] = binary.LittleEndian.Uint16(p[16+2*k:])
		}
		p = p[per:]
	}
	m := int(binary.LittleEndian.Uint32(p))
	p = p[4:]
	const tper = 2 + 4 + 4 + 24
	if m < 0 || len(p) != m*tper {
		return nil, bad
	}
	t.Transfers = make([]Transfer, m)
	for i := range t.Transfers {
		tr := &t.Transfers[i]
		tr.H2D = p[0] == 1
		tr.Blocks = int(binary.LittleEndian.Uint32(p[2:]))
		tr.Pass = int(binary.LittleEndian.Uint32(p[6:]))
		tr.Submit = math.Float64frombits(binary.LittleEndian.Uint64(p[10:]))
		tr.Deadline = math.Float64frombits(binary.LittleEndian.Uint64(p[18:]))
		tr.Complete = math.Float64frombits(binary.LittleEndian.Uint64(p[26:]))
		p = p[tper:]
	}
	return t, nil
}

// A Divergence compares one run with the first run on one rank, as kvsim
// diff does (record.Diff): where they first hold different blocks, which
// blocks each evicted that the other kept, and the restores each made that
// the other lost.
type Divergence struct {
	Run  int `json:"run"`
	Rank int `json:"rank"`
	// Refused says why the two runs cannot be compared ("" when they can).
	Refused string `json:"refused,omitempty"`
	// Pass is the first pass whose cached G1 blocks or G2 entries differ
	// (0: none); HeldOnlyFirst and HeldOnlyThis are the blocks only one
	// run holds at its end.
	Pass int `json:"pass"`
	// From is the first pass the records keep when they keep a window of
	// a long run (0: all): a divergence at From may have begun before it.
	From          int         `json:"from,omitempty"`
	HeldOnlyFirst []TierBlock `json:"held_only_first,omitempty"`
	HeldOnlyThis  []TierBlock `json:"held_only_this,omitempty"`
	// Passes are the passes where one run evicted blocks the other kept,
	// in order (bounded, see MaxDivergentPasses; MorePasses are left out).
	Passes     []DivergentPass `json:"passes,omitempty"`
	MorePasses int             `json:"more_passes,omitempty"`
	// RestoresOnlyFirst and RestoresOnlyThis count the blocks one run
	// restored from G2 and the other did not; BlockSize turns them into
	// tokens.
	RestoresOnlyFirst int `json:"restores_only_first"`
	RestoresOnlyThis  int `json:"restores_only_this"`
	BlockSize         int `json:"block_size"`
}

// MaxDivergentPasses and MaxDivergentBlocks bound Divergence.Passes: at
// most so many passes, and passes with at most so many blocks in all.
const (
	MaxDivergentPasses = 2000
	MaxDivergentBlocks = 20000
)

// A DivergentPass is one pass where the runs evicted different blocks:
// First are the blocks the first run evicted and this run kept, This the
// reverse.
type DivergentPass struct {
	Pass  int         `json:"pass"`
	First []TierBlock `json:"first,omitempty"`
	This  []TierBlock `json:"this,omitempty"`
}

// A TierBlock is a block in G1 ("g1") or G2 ("g2").
type TierBlock struct {
	Tier  string `json:"tier"`
	Block string `json:"block"`
}
