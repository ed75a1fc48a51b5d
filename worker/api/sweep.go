package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/sweep"
)

// sweepRequest is the JSON body of POST /api/sweep: a replay request plus
// the grid. Without Point the answer lists the grid's points; with it, the
// answer is that one point's run, so a browser can fan a sweep out as one
// request per point (each in its own isolate).
//
// The grid is core/sweep's (the CLI's `kvsim sweep`): the same --vary
// syntax and shorthand paths, the same point order (first axis slowest,
// last fastest) and the same validation messages.
type sweepRequest struct {
	replayRequest
	// Vary is either an object mapping each --vary PATH to an array of
	// values (JSON numbers, booleans, null, objects and arrays are written
	// as YAML flow text; a JSON string is taken as YAML text verbatim), or
	// an array of --vary arguments "PATH=v1,v2,…" exactly as the CLI takes
	// them. Keys and elements are used in the order written.
	Vary json.RawMessage `json:"vary"`
	// Point is the index of the point to run.
	Point *int `json:"point"`
}

// varyArgs turns "vary" into --vary arguments.
func varyArgs(raw json.RawMessage) ([]string, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badRequest(`missing "vary": an object mapping --vary paths to arrays of values, or an array of "PATH=v1,v2" strings`)
	}
	if raw[0] == '[' {
		var args []string
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, badRequest(`"vary" as an array must hold --vary strings "PATH=v1,v2,…"`)
		}
		if len(args) == 0 {
			return nil, badRequest(`"vary" names no paths`)
		}
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, _ := dec.Token(); t != json.Delim('{') {
		return nil, badRequest(`"vary" must be an object mapping --vary paths to arrays of values, or an array of "PATH=v1,v2" strings`)
	}
	var args []string
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, badRequest(`malformed "vary": ` + err.Error())
		}
		p := t.(string) // object keys are strings
		if seen[p] {
			return nil, badRequest(fmt.Sprintf(`"vary" names %q twice`, p))
		}
		seen[p] = true
		var vals []json.RawMessage
		if err := dec.Decode(&vals); err != nil {
			return nil, badRequest(fmt.Sprintf(`"vary"[%q] must be an array of values`, p))
		}
		if len(vals) == 0 {
			return nil, badRequest(fmt.Sprintf(`"vary"[%q] has no values`, p))
		}
		texts := make([]string, len(vals))
		for i, v := range vals {
			var b bytes.Buffer
			if err := json.Compact(&b, v); err != nil {
				return nil, badRequest(fmt.Sprintf(`"vary"[%q]: %v`, p, err))
			}
			texts[i] = b.String()
			var s string
			if texts[i][0] == '"' && json.Unmarshal(b.Bytes(), &s) == nil {
				texts[i] = s
			}
		}
		args = append(args, p+"="+strings.Join(texts, ","))
	}
	if len(args) == 0 {
		return nil, badRequest(`"vary" names no paths`)
	}
	return args, nil
}

// plan validates the grid with core/sweep. The number of points is checked
// first: sweep.NewPlan parses every point's config.
func (s *server) plan(req *sweepRequest) (*sweep.Plan, *apiError) {
	if req.Passes {
		return nil, &apiError{Status: http.StatusUnprocessableEntity, Kind: kindRequest, Path: "passes",
			Msg: "a sweep point does not return the per-pass record; ask /api/replay with the point's set"}
	}
	args, aerr := varyArgs(req.Vary)
	if aerr != nil {
		return nil, aerr
	}
	n := 1
	for _, a := range args {
		v, err := sweep.ParseVary(a)
		if err != nil {
			return nil, coreError(err)
		}
		n *= len(v.Values)
		if n > s.lim.MaxSweepPoints {
			return nil, overLimit("vary", fmt.Sprintf("the grid has more than %d points (the limit)", s.lim.MaxSweepPoints))
		}
	}
	data, name, aerr := configText(&req.replayRequest)
	if aerr != nil {
		return nil, aerr
	}
	p, err := sweep.NewPlan(sweep.Spec{Name: name, Dir: ".", Data: data, Sets: req.Set, Vary: args})
	if err != nil {
		return nil, coreError(err)
	}
	return p, nil
}

// pointInfo describes one point: Set is the whole list of overrides, so
// POST /api/replay with the same config and this "set" runs the point.
type pointInfo struct {
	Index  int      `json:"index"`
	Label  string   `json:"label"`
	Values []string `json:"values"`
	Set    []string `json:"set"`
}

func describePoint(p *sweep.Plan, i int) pointInfo {
	return pointInfo{Index: i, Label: p.Label(i), Values: p.Values(i), Set: p.Overrides(i)}
}

type axisInfo struct {
	Path    string   `json:"path"`
	Values  []string `json:"values"`
	Targets []string `json:"targets"`
}

func (s *server) sweep(w http.ResponseWriter, r *http.Request) {
	var req sweepRequest
	if err := s.readBody(r, &req, nil); err != nil {
		writeError(w, err)
		return
	}
	p, aerr := s.plan(&req)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if req.Point == nil {
		s.listing(w, p, &req.replayRequest)
		return
	}
	i := *req.Point
	if i < 0 || i >= p.Len() {
		writeError(w, badRequest(fmt.Sprintf(`"point" %d is out of range: the grid has points 0 to %d`, i, p.Len()-1)))
		return
	}
	job, aerr := s.pointJob(p, i, &req.replayRequest)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	out, aerr := run(job)
	if aerr != nil {
		aerr.Point = &i
		writeError(w, aerr)
		return
	}
	head, _ := json.Marshal(describePoint(p, i))
	writeRaw(w, http.StatusOK, resultJSON(head, out))
}

// pointJob is point i of the grid as the replay job of req.
func (s *server) pointJob(p *sweep.Plan, i int, req *replayRequest) (replay.Job, *apiError) {
	job, aerr := s.job(req)
	if aerr != nil {
		return job, aerr
	}
	job.Sets = p.Overrides(i)
	return job, nil
}

// listing answers with the grid after checking each point's config against
// the limits, so that a point over a limit is reported before the fan-out.
func (s *server) listing(w http.ResponseWriter, p *sweep.Plan, req *replayRequest) {
	axes := make([]axisInfo, len(p.Axes))
	for k, a := range p.Axes {
		axes[k] = axisInfo{Path: a.Path, Values: a.Values, Targets: a.Targets}
	}
	pts := make([]pointInfo, p.Len())
	for i := range pts {
		job, aerr := s.pointJob(p, i, req)
		if aerr != nil {
			writeError(w, aerr)
			return
		}
		if err := replay.Check(job); err != nil {
			aerr := coreError(err)
			aerr.Point = &i
			writeError(w, aerr)
			return
		}
		pts[i] = describePoint(p, i)
	}
	writeJSON(w, http.StatusOK, struct {
		Count  int         `json:"count"`
		Axes   []axisInfo  `json:"axes"`
		Points []pointInfo `json:"points"`
	}{p.Len(), axes, pts})
}
