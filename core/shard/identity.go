package shard

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/sweep"
)

// Identity is the sweep's identity: the hex SHA-256 of the config's name
// and text, the --set and --vary arguments, and the path and bytes of
// every trace a point reads (paths, as Costs lists them). The config's directory is
// left out, so the same sweep run from two machines' paths has one
// identity; two sweeps that differ in anything a point's result can
// depend on have two.
func Identity(p *sweep.Plan, traces replay.Traces, paths []string) (string, error) {
	h := sha256.New()
	field := func(b []byte) {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
	}
	list := func(tag string, xs []string) {
		field([]byte(tag))
		field(binary.BigEndian.AppendUint64(nil, uint64(len(xs))))
		for _, x := range xs {
			field([]byte(x))
		}
	}
	field([]byte("kvsim sweep identity 1"))
	field([]byte(p.Spec.Name))
	field(p.Spec.Data)
	list("set", p.Spec.Sets)
	list("vary", p.Spec.Vary)
	list("traces", paths)
	for _, path := range paths {
		b, err := traces.Read(path)
		if err != nil {
			return "", fmt.Errorf("trace %s: %v", path, err)
		}
		field(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
