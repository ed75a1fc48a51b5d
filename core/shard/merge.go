package shard

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kvsim/kvsim/core/sweep"
)

// A Named file is a decoded shard file and the path it was read from.
type Named struct {
	Name string
	File *File
}

// maxListed bounds the points a message names per shard.
const maxListed = 8

// Merge checks that files are shards of one sweep, computed by one build
// and split the same way, that no two disagree on a point, and that
// together they hold every point without an error; then it collects them
// into the sweep's result. A file may appear twice (a re-run shard) as
// long as it agrees. The error names what is wrong: the file of another
// sweep, build or split; the missing points and the shards that owe them;
// the failed points and their errors.
func Merge(files []Named) (*sweep.Result, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("no shard files to merge")
	}
	first := files[0]
	for _, nf := range files[1:] {
		if err := same(first, nf); err != nil {
			return nil, err
		}
	}
	f0 := first.File
	p, err := sweep.NewPlan(f0.Spec())
	if err != nil {
		return nil, fmt.Errorf("%s: the sweep it records: %v", first.Name, err)
	}
	if p.Len() != len(f0.Owners) {
		return nil, fmt.Errorf("%s: %d owners for a grid of %d points", first.Name, len(f0.Owners), p.Len())
	}
	got := make([]*Point, p.Len())
	from := make([]string, p.Len())
	for _, nf := range files {
		for j := range nf.File.Points {
			pt := &nf.File.Points[j]
			if prev := got[pt.Point]; prev != nil {
				if !bytes.Equal(prev.Summary, pt.Summary) || prev.Error != pt.Error {
					return nil, fmt.Errorf("%s differs between %s and %s: a shard was computed twice with different results; remove one",
						p.Label(pt.Point), from[pt.Point], nf.Name)
				}
				continue
			}
			got[pt.Point], from[pt.Point] = pt, nf.Name
		}
	}
	if msg := incomplete(p, f0, got); msg != "" {
		return nil, fmt.Errorf("%s", msg)
	}
	summaries := make([][]byte, p.Len())
	for i, pt := range got {
		summaries[i] = pt.Summary
	}
	return sweep.Collect(p, summaries)
}

// same refuses b unless it is a shard of a's sweep, build and split.
func same(a, b Named) error {
	fa, fb := a.File, b.File
	switch {
	case fa.Build != fb.Build:
		return fmt.Errorf("%s was computed by another kvsim build (%s) than %s (%s): run every shard with one build",
			b.Name, fb.Build, a.Name, fa.Build)
	case fa.Sweep != fb.Sweep:
		return fmt.Errorf("%s is a shard of a different sweep than %s: %s (%s vs %s); merge the shards of one sweep only",
			b.Name, a.Name, differ(fa, fb), short(fb.Sweep), short(fa.Sweep))
	case fa.Shards != fb.Shards:
		return fmt.Errorf("%s is shard %d of %d, but %s is shard %d of %d: merge the shards of one --shard K/N split only",
			b.Name, fb.Shard, fb.Shards, a.Name, fa.Shard, fa.Shards)
	case !equalInts(fa.Owners, fb.Owners):
		return fmt.Errorf("%s assigns the points to shards differently than %s", b.Name, a.Name)
	}
	return nil
}

// differ says what makes two sweeps' identities differ.
func differ(a, b *File) string {
	switch {
	case a.Config != b.Config:
		return fmt.Sprintf("config %s vs %s", b.Config, a.Config)
	case a.Text != b.Text:
		return "the config's text differs"
	case strings.Join(a.Set, "\x00") != strings.Join(b.Set, "\x00"):
		return fmt.Sprintf("--set %s vs %s", strings.Join(b.Set, " "), strings.Join(a.Set, " "))
	case strings.Join(a.Vary, "\x00") != strings.Join(b.Vary, "\x00"):
		return fmt.Sprintf("another grid: %s vs %s", varies(b.Vary), varies(a.Vary))
	}
	return "the traces differ"
}

func varies(vs []string) string {
	if len(vs) == 0 {
		return "(no --vary)"
	}
	return "--vary " + strings.Join(vs, " --vary ")
}

func short(id string) string { return "sweep " + id[:min(len(id), 12)] }

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// incomplete describes missing and failed points, by the shard that owes
// them; "" when every point has a summary.
func incomplete(p *sweep.Plan, f *File, got []*Point) string {
	missing := map[int][]int{} // shard → points
	var failed []*Point
	nMissing := 0
	for i, pt := range got {
		switch {
		case pt == nil:
			missing[f.Owners[i]] = append(missing[f.Owners[i]], i)
			nMissing++
		case pt.Error != "":
			failed = append(failed, pt)
		}
	}
	var b strings.Builder
	if nMissing > 0 {
		fmt.Fprintf(&b, "%d of %d points are missing; re-run the shards that owe them:", nMissing, p.Len())
		for k := range f.Shards {
			pts := missing[k]
			if len(pts) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n  shard %d/%d (%s, `kvsim sweep --shard %d/%d`): %s", k, f.Shards,
				Shard{k, f.Shards}.FileName(), k, f.Shards, labels(p, pts))
		}
	}
	if len(failed) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%d of %d points failed:", len(failed), p.Len())
		for _, pt := range failed {
			fmt.Fprintf(&b, "\n  shard %d/%d: %s", f.Owners[pt.Point], f.Shards, pt.Error)
		}
	}
	return b.String()
}

// labels names up to maxListed points.
func labels(p *sweep.Plan, pts []int) string {
	var out []string
	for _, i := range pts[:min(len(pts), maxListed)] {
		out = append(out, p.Label(i))
	}
	if len(pts) > maxListed {
		out = append(out, fmt.Sprintf("and %d more", len(pts)-maxListed))
	}
	return strings.Join(out, ", ")
}
