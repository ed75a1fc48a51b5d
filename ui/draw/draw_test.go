package draw

import (
	"image"
	"math"
	"testing"

	"github.com/kvsim/kvsim/wasm/proto"
)

func TestTurnChart(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 600, 240))
	turns := []proto.Turn{{Turn: 0, Recomputed: 2048}, {Turn: 1, G1: 1000, Restored: 500, Recomputed: 300}}
	L := TurnChart(img, [][]proto.Turn{turns, turns}, []string{"a", "b"})
	count := map[[3]uint8]int{}
	for i := 0; i < len(img.Pix); i += 4 {
		count[[3]uint8{img.Pix[i], img.Pix[i+1], img.Pix[i+2]}]++
	}
	for name, c := range map[string][3]uint8{"g1": {0x00, 0x9E, 0x73}, "restored": {0x00, 0x72, 0xB2}, "recomputed": {0xD5, 0x5E, 0x00}} {
		if count[c] < 50 {
			t.Errorf("%s: %d pixels", name, count[c])
		}
	}
	if L.Max < 2348 || L.Group <= 0 {
		t.Errorf("layout %+v", L)
	}
	empty := image.NewRGBA(image.Rect(0, 0, 300, 200))
	TurnChart(empty, nil, nil) // must not panic
}

func frameOf(n1, n2 int) *proto.Frame {
	f := &proto.Frame{G1: make([]proto.Cell, n1), G2: make([]proto.Cell, n2)}
	states := []byte{'.', 'p', 'A', 'i', 'h', 'r'}
	for i := range f.G1 {
		f.G1[i] = proto.Cell{State: states[i%len(states)], Session: int32(i % 7), Order: int32(i % 50), Key: uint32(i + 1), Name: -1, Owner: -1}
		if f.G1[i].State != 'i' {
			f.G1[i].Order = -1
		}
	}
	for i := range f.G2 {
		f.G2[i] = proto.Cell{State: "PRN"[i%3], Session: int32(i % 5), Order: int32(i), Key: uint32(1000 + i), Name: -1, Owner: -1}
	}
	return f
}

func TestPassLayoutHit(t *testing.T) {
	for _, c := range []struct{ w, n1, n2 int }{{900, 128, 192}, {400, 3, 8}, {1000, 16384, 0}, {320, 16384, 4096}} {
		L := LayoutPass(c.w, 560, c.n1, c.n2)
		if L.Cell < 3 || L.W != c.w {
			t.Fatalf("%+v: %+v", c, L)
		}
		for _, i := range []int{0, c.n1 / 2, c.n1 - 1} {
			r := L.CellRect(L.G1Y, i/L.Per)
			tier, j, ok := L.Hit(r.Min.X, r.Min.Y)
			if !ok || tier != 1 || j != i/L.Per*L.Per {
				t.Errorf("%+v: G1 cell %d hit as %d %d %v", c, i, tier, j, ok)
			}
		}
		if c.n2 > 0 {
			r := L.CellRect(L.G2Y, (c.n2-1)/L.Per)
			if tier, j, ok := L.Hit(r.Min.X, r.Min.Y); !ok || tier != 2 || j != (c.n2-1)/L.Per*L.Per {
				t.Errorf("%+v: G2 last cell hit as %d %d %v", c, tier, j, ok)
			}
		}
		if _, _, ok := L.Hit(L.W-1, L.H-1); ok {
			t.Errorf("%+v: the lanes hit a cell", c)
		}
	}
}

// TestDrawPassColours checks the flashes and states that tests in the
// browser look for.
func TestDrawPassColours(t *testing.T) {
	f := frameOf(12, 6)
	f.G1[2].Flash = proto.FlashRestored
	f.G1[3].Flash = proto.FlashEvicted
	L := LayoutPass(400, 400, 12, 6)
	img := image.NewRGBA(image.Rect(0, 0, L.W, L.H))
	diff := make([]bool, 12)
	diff[5] = true
	DrawPass(img, L, f, PassOptions{Title: "x", DiffG1: diff, Highlight: f.G1[1].Key,
		Transfers: []proto.Transfer{{H2D: true, Blocks: 3, Submit: 1, Deadline: 3, Complete: 2}, {Blocks: 2, Submit: 0, Complete: math.NaN(), Deadline: 4}},
		From:      0, To: 5, PassStart: 1, PassEnd: 2})
	at := func(r image.Rectangle) [3]uint8 {
		p := img.PixOffset(r.Min.X+2, r.Min.Y+1)
		return [3]uint8{img.Pix[p], img.Pix[p+1], img.Pix[p+2]}
	}
	if got := at(L.CellRect(L.G1Y, 2)); got != [3]uint8{0x00, 0x72, 0xB2} {
		t.Errorf("restored cell %x", got)
	}
	if got := at(L.CellRect(L.G1Y, 3)); got != [3]uint8{0xD5, 0x5E, 0x00} {
		t.Errorf("evicted cell %x", got)
	}
	if got := at(L.CellRect(L.G1Y, 0)); got != [3]uint8{ColFree.R, ColFree.G, ColFree.B} {
		t.Errorf("free cell %x", got)
	}
	r := L.CellRect(L.G1Y, 5)
	p := img.PixOffset(r.Min.X, r.Min.Y+3)
	if img.Pix[p] != ColDiff.R || img.Pix[p+1] != ColDiff.G {
		t.Errorf("diff outline missing")
	}
	r = L.CellRect(L.G1Y, 1)
	p = img.PixOffset(r.Min.X, r.Min.Y+3)
	if img.Pix[p] != ColHighlight.R || img.Pix[p+2] != ColHighlight.B {
		t.Errorf("highlight outline missing")
	}
}

func TestTimeline(t *testing.T) {
	tl := &proto.Timeline{Start: []float64{0, 1, 2}, End: []float64{1, 2, 3}, Counts: make([][proto.NumMarks]uint16, 3), Diverge: 2}
	tl.Counts[1][proto.MarkRestore] = 1
	L := LayoutTimeline(500, 2, 1, 3)
	img := image.NewRGBA(image.Rect(0, 0, L.W, L.H))
	DrawTimeline(img, L, []string{"a", "b"}, []*proto.Timeline{tl, nil}, 2)
	for _, p := range []int{1, 2, 3} {
		if L.PassAt(L.X(p)) != p {
			t.Errorf("pass %d maps to x %d and back to %d", p, L.X(p), L.PassAt(L.X(p)))
		}
	}
}

// TestTimelineWindow: a timeline of a kept window (passes 100,000 to
// 100,002) spans the axis and draws each pass's marks at its own x.
func TestTimelineWindow(t *testing.T) {
	tl := &proto.Timeline{First: 100_000, Start: []float64{0, 1, 2}, End: []float64{1, 2, 3}, Counts: make([][proto.NumMarks]uint16, 3)}
	tl.Counts[1][proto.MarkRestore] = 1
	L := LayoutTimeline(500, 1, 100_000, 100_002)
	if L.X(100_000) != L.X0 || L.X(100_002) != L.X1 || L.PassAt(L.X0-5) != 100_000 || L.PassAt(L.X(100_001)) != 100_001 {
		t.Fatalf("axis: x %d, %d, %d; pass at x0 %d", L.X(100_000), L.X(100_001), L.X(100_002), L.PassAt(L.X0))
	}
	img := image.NewRGBA(image.Rect(0, 0, L.W, L.H))
	DrawTimeline(img, L, []string{"a"}, []*proto.Timeline{tl}, 100_000)
	lane := 8 + 1 + 3*((tlRow-6)/4) // the restore lane of row 0
	if got := img.RGBAAt(L.X(100_001), lane+1); got != MarkColours[proto.MarkRestore] {
		t.Errorf("the restore of pass 100,001 is not at x %d: %v", L.X(100_001), got)
	}
}

// TestBarrier: the warmup barrier's line sits between the last
// preparation pass and the next, on its row only.
func TestBarrier(t *testing.T) {
	L := LayoutTimeline(500, 2, 1, 30)
	img := image.NewRGBA(image.Rect(0, 0, L.W, L.H))
	DrawTimeline(img, L, []string{"a", "b"}, []*proto.Timeline{nil, nil}, 1)
	DrawBarrier(img, L, 1, 10)
	x := (L.X(10) + L.X(11) + 1) / 2
	if x <= L.X(10) || x > L.X(11) {
		t.Fatalf("barrier x %d not between passes 10 (%d) and 11 (%d)", x, L.X(10), L.X(11))
	}
	if got := img.RGBAAt(x, 8+tlRow+tlRow/2); got != ColBarrier {
		t.Errorf("row 1 at x %d: %v", x, got)
	}
	if got := img.RGBAAt(x, 8+tlRow/2); got == ColBarrier {
		t.Error("row 0 has the barrier too")
	}
}

// BenchmarkDrawPass16k draws a pass with a 16,384-slot G1 and 4,096 G2
// entries (the budget is one 16 ms frame in the browser).
func BenchmarkDrawPass16k(b *testing.B) {
	f := frameOf(16384, 4096)
	L := LayoutPass(1000, 700, 16384, 4096)
	img := image.NewRGBA(image.Rect(0, 0, L.W, L.H))
	for b.Loop() {
		DrawPass(img, L, f, PassOptions{Title: "bench", From: 0, To: 10, PassStart: 4, PassEnd: 5})
	}
}

// TestHugePoolsAreBinned: a pool of a million slots (and a G2 tier of
// 16 million) fits the canvas's height by binning; every cell is hit back
// to its first slot; small pools are not binned.
func TestHugePoolsAreBinned(t *testing.T) {
	for _, c := range []struct{ w, maxH, n1, n2 int }{{900, 560, 1 << 20, 0}, {420, 420, 10_000_000, 1 << 24}, {900, 560, 128, 2048}} {
		L := LayoutPass(c.w, c.maxH, c.n1, c.n2)
		if L.H > c.maxH || L.W != c.w {
			t.Errorf("%+v: %dx%d canvas, per %d", c, L.W, L.H, L.Per)
		}
		if (c.n1 < 10000) != (L.Per == 1) {
			t.Errorf("%+v: per %d", c, L.Per)
		}
		last := (c.n1 - 1) / L.Per
		r := L.CellRect(L.G1Y, last)
		if tier, j, ok := L.Hit(r.Min.X, r.Min.Y); !ok || tier != 1 || j != last*L.Per {
			t.Errorf("%+v: last G1 cell hit as %d %d %v", c, tier, j, ok)
		}
	}
	// a binned cell shows the eviction among its slots
	f := frameOf(1<<20, 0)
	for i := range f.G1 {
		f.G1[i] = proto.Cell{State: '.', Session: -1, Order: -1}
	}
	L := LayoutPass(900, 560, len(f.G1), 0)
	k := 5*L.Per + L.Per/2
	f.G1[k].Flash = proto.FlashEvicted
	img := image.NewRGBA(image.Rect(0, 0, L.W, L.H))
	DrawPass(img, L, f, PassOptions{Title: "x"})
	r := L.CellRect(L.G1Y, 5)
	if p := img.PixOffset(r.Min.X, r.Min.Y); [3]uint8(img.Pix[p:p+3]) != [3]uint8{ColEvicted.R, ColEvicted.G, ColEvicted.B} {
		t.Errorf("the binned cell of an evicted slot is %x", img.Pix[p:p+3])
	}
}

// BenchmarkDrawPass1M draws a pass of a 1,048,576-slot G1, binned.
func BenchmarkDrawPass1M(b *testing.B) {
	f := frameOf(1<<20, 0)
	L := LayoutPass(1000, 560, len(f.G1), 0)
	img := image.NewRGBA(image.Rect(0, 0, L.W, L.H))
	for b.Loop() {
		DrawPass(img, L, f, PassOptions{Title: "bench", From: 0, To: 10, PassStart: 4, PassEnd: 5})
	}
}
