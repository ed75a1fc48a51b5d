package draw

import (
	"image"
	"image/color"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/kvsim/kvsim/wasm/proto"
)

// legendColour is the first colour of the legend swatch .sw.<class> in
// public/style.css (for a gradient, its first stop).
func legendColour(t *testing.T, class string) color.RGBA {
	t.Helper()
	css, err := os.ReadFile("../../public/style.css")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\.sw\.` + class + ` \{[^}]*?#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b`).FindSubmatch(css)
	if m == nil {
		t.Fatalf("no colour for .sw.%s in style.css", class)
	}
	h := string(m[1])
	if len(h) == 3 {
		h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
	}
	v, _ := strconv.ParseUint(h, 16, 32)
	return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 0xff}
}

// TestCellsWearTheLegendColours: a block in every state is drawn with its
// legend swatch's colour, whatever its session (the session is a strip on
// the left edge) and whether it holds answer tokens (a corner mark): the
// pixel sampled right of the strip, below the corner and above the
// eviction bar is the swatch's.
func TestCellsWearTheLegendColours(t *testing.T) {
	states := []struct {
		state byte
		class string
	}{{'.', "free"}, {'A', "active"}, {'i', "idle"}, {'r', "reserved"}, {'N', "pinned"}, {'R', "idle"}}
	for _, s := range states {
		for _, session := range []int32{0, 1, 5} {
			for _, answer := range []bool{false, true} {
				img := image.NewRGBA(image.Rect(0, 0, 20, 20))
				r := image.Rect(0, 0, 15, 15)
				drawCell(img, r, proto.Cell{State: s.state, Session: session, Order: 3, Answer: answer}, 10)
				got := img.RGBAAt(r.Min.X+r.Dx()*3/5, r.Min.Y+r.Dy()/2)
				if want := legendColour(t, s.class); got != want {
					t.Errorf("%c (session %d, answer %v): drawn %v; legend .sw.%s is %v", s.state, session, answer, got, s.class, want)
				}
			}
		}
	}
	// the answer mark and the session strip are drawn
	img := image.NewRGBA(image.Rect(0, 0, 20, 20))
	r := image.Rect(0, 0, 15, 15)
	drawCell(img, r, proto.Cell{State: 'A', Session: 1, Answer: true}, 0)
	if got := img.RGBAAt(r.Max.X-1, r.Min.Y); got != ColBar {
		t.Errorf("answer corner %v", got)
	}
	if got := img.RGBAAt(r.Min.X, r.Min.Y+r.Dy()/2); got != Hue(1) {
		t.Errorf("session strip %v; want %v", got, Hue(1))
	}
}
