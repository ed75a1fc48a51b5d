package replay

import "github.com/kvsim/kvsim/core/connector"

// Policy is one G2 connector profile's policy for people, built from the
// rules table (connector.Describe): what it evicts first, when it touches
// entries, what it stores, and the three in one line.
type Policy struct {
	Connector               string
	Evicts, Touches, Stores string
	Line                    string
}

// Policies describes every connector profile, in the config's order.
func Policies() []Policy {
	var out []Policy
	for _, name := range connector.ProfileNames() {
		r, err := connector.Profile(name)
		if err != nil {
			continue
		}
		d := connector.Describe(r)
		out = append(out, Policy{Connector: name, Evicts: d.Evicts, Touches: d.Touches, Stores: d.Stores, Line: d.Line()})
	}
	return out
}
