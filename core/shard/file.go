package shard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kvsim/kvsim/core/sweep"
)

// Format names the shard file's layout; Decode refuses any other.
const Format = "kvsim sweep shard 1"

// A File is one shard's part of a sweep: what the sweep is (enough to
// rebuild its plan anywhere, without the traces), which shard this is,
// and each of its points' summary or error.
type File struct {
	Format string `json:"format"`
	// Build names the kvsim build that computed the points; merge refuses
	// shards of two builds.
	Build string `json:"build"`
	// Sweep is the sweep's Identity.
	Sweep  string `json:"sweep"`
	Shard  int    `json:"shard"`
	Shards int    `json:"shards"`
	// Config, Text, Set and Vary are the sweep's spec: the config's name
	// and text, the --set and --vary arguments.
	Config string   `json:"config"`
	Text   string   `json:"config_text"`
	Set    []string `json:"set"`
	Vary   []string `json:"vary"`
	// Owners gives every point of the grid its shard (Assign).
	Owners []int `json:"owners"`
	// Points are this shard's points in increasing order.
	Points []Point `json:"points"`
}

// A Point is one evaluated point: its estimated cost, and its summary (as
// report.SummaryJSON encodes it) or the error that stopped it.
type Point struct {
	Point   int             `json:"point"`
	Cost    int64           `json:"cost"`
	Summary json.RawMessage `json:"summary,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// Spec is the sweep spec the file records (its directory is ".": a merge
// reads no trace).
func (f *File) Spec() sweep.Spec {
	return sweep.Spec{Name: f.Config, Dir: ".", Data: []byte(f.Text), Sets: f.Set, Vary: f.Vary}
}

// Failed lists the points that failed.
func (f *File) Failed() []Point {
	var out []Point
	for _, p := range f.Points {
		if p.Error != "" {
			out = append(out, p)
		}
	}
	return out
}

// Encode writes the file as JSON, one point per line; summaries are kept
// byte for byte.
func (f *File) Encode() []byte {
	head := *f
	head.Points = nil
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(head)
	b.Truncate(b.Len() - len(`,"points":null}`+"\n"))
	b.WriteString(`,"points":[`)
	for i, p := range f.Points {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n{\"point\":%d,\"cost\":%d,", p.Point, p.Cost)
		if p.Error != "" {
			b.WriteString(`"error":`)
			enc.Encode(p.Error)
			b.Truncate(b.Len() - 1)
		} else {
			b.WriteString(`"summary":`)
			b.Write(p.Summary) // as the report wrote it (encoding/json would compact it)
		}
		b.WriteByte('}')
	}
	b.WriteString("\n]}\n")
	return b.Bytes()
}

// Decode reads a shard file; name is its path in errors.
func Decode(name string, data []byte) (*File, error) {
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: not a kvsim shard file: %v", name, err)
	}
	if f.Format != Format {
		return nil, fmt.Errorf("%s: format %q, want %q (a shard file of another kvsim version?)", name, f.Format, Format)
	}
	if f.Shards < 1 || f.Shard < 0 || f.Shard >= f.Shards || len(f.Owners) == 0 {
		return nil, fmt.Errorf("%s: shard %d of %d over %d points: not a valid shard", name, f.Shard, f.Shards, len(f.Owners))
	}
	for i, o := range f.Owners {
		if o < 0 || o >= f.Shards {
			return nil, fmt.Errorf("%s: owners[%d] = %d is not a shard of %d", name, i, o, f.Shards)
		}
	}
	for _, p := range f.Points {
		if p.Point < 0 || p.Point >= len(f.Owners) || f.Owners[p.Point] != f.Shard {
			return nil, fmt.Errorf("%s: holds point %d, which is not shard %d's", name, p.Point, f.Shard)
		}
		if (len(p.Summary) == 0) == (p.Error == "") {
			return nil, fmt.Errorf("%s: point %d needs exactly one of summary and error", name, p.Point)
		}
	}
	return &f, nil
}

// spec describes the sweep for messages: "config X, --set …, --vary …".
func (f *File) spec() string {
	parts := []string{"config " + f.Config}
	for _, s := range f.Set {
		parts = append(parts, "--set "+s)
	}
	for _, v := range f.Vary {
		parts = append(parts, "--vary "+v)
	}
	return strings.Join(parts, " ")
}
