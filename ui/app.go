package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/vugu/vugu"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/ui/draw"
	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// Chart canvas size in CSS pixels.
const chartW, chartH = 720, 240

// PageRows is the request table's page length (the DOM stays small).
const PageRows = 16

// App is the page's state. Components read it and call its methods from
// event handlers (vugu holds the render lock then); worker replies arrive
// through Deliver, under the same lock.
type App struct {
	host Host

	// The config: YAML is the truth, Cfg what it parses to (nil when it
	// does not), Form what the controls show.
	Name     string
	YAML     string
	Cfg      *config.Config
	Form     state.Form
	lastG2   state.Form
	lastKV   float64           // the last P/D transfer bandwidth, for turning P/D on again
	YAMLErr  string            // config error with no control of its own
	FieldErr map[string]string // control → message (the CLI's)
	// Shown holds what a control shows while its value does not parse.
	Shown map[string]string

	Example *state.Example
	Compare *state.Compare
	// CompareG2 is the G2-size compare input text.
	CompareG2  string
	CompareErr string

	// Traces
	Uploads    map[string]*Upload // by config path name
	UploadErr  string
	UploadNote string
	UpFormat   string
	UpBlock    int
	upPending  *Upload
	checkID    int
	fileID     int
	fileName   string
	Sessions   state.SessionSpec
	ShowGen    bool
	TraceNote  string // e.g. an uploaded trace the link names but the browser lacks

	// Runs
	WorkerReady bool
	Running     bool
	seq         int // message ids
	jobID       int // the current run's id
	runMsg      map[string]any
	runStart    time.Time
	autoRun     bool
	Progress    float64
	ProgressMsg string
	RunErr      string
	Status      string
	Results     []*Result
	resultsRun  int            // the run id of the shown results
	resultsMsg  map[string]any // and its message (to replay it for files)
	// Runs counts finished runs (tests wait for it to move).
	Runs     int
	Selected int
	SortKey  string
	SortDesc bool
	Page     int
	// RunMs is the time from Run to results as the page saw it.
	RunMs      float64
	chartDirty bool
	chart      *image.RGBA
	// PV is the pass view of the shown results (nil before a run); PVNote
	// says what went wrong with it.
	PV     *PassView
	PVNote string
	// linkPass and linkRank place the pass view when a link gives them.
	linkPass, linkRank int
	Copied             bool
	Fatal              string
	// View is ViewRun or ViewSweep; Sw is the sweep view's state.
	View string
	Sw   *Sweep
}

// MaxStoredTrace is the largest uploaded trace kept in the browser's
// storage for reloads.
const MaxStoredTrace = 2 << 20

// Upload is an uploaded trace.
type Upload struct {
	Name, Hash string
	Size       int
	Format     string
	Block      int
	Info       proto.TraceInfo
	text       any
}

// Result is one run of the last job.
type Result struct {
	Label string
	View  *proto.View
	Err   *ErrInfo
	msg   VariantMsg
}

// NewApp builds the app and applies the link's fragment.
func NewApp(h Host, fragment string) *App {
	a := &App{host: h, Name: "config.yaml", FieldErr: map[string]string{}, Shown: map[string]string{},
		Uploads: map[string]*Upload{}, UpFormat: config.FormatMooncakeDelta, UpBlock: 16, Sessions: state.DefaultSessions,
		SortKey: "id", CompareG2: "192, 2048, none", View: ViewRun, Sw: newSweep(h.Cores())}
	share, err := state.ParseFragment(fragment)
	if err != nil {
		a.RunErr = err.Error() + "; showing the default example instead"
		share = state.DefaultExample().Share()
	}
	a.applyShare(share)
	a.autoRun = a.Cfg != nil && a.TraceNote == ""
	return a
}

func (a *App) applyShare(s state.Share) {
	a.Example = state.ExampleByID(s.Example)
	if s.View == ViewSweep {
		a.View = ViewSweep
	} else {
		a.View = ViewRun
	}
	a.linkPass, a.linkRank = s.Pass, s.Rank
	a.PV, a.PVNote = nil, ""
	a.Compare = s.Compare
	a.Results, a.resultsMsg = nil, nil
	if s.Upload != nil {
		if text, ok := a.host.LoadUpload(s.Upload.Hash); ok {
			a.Uploads[s.Upload.Name] = &Upload{Name: s.Upload.Name, Hash: s.Upload.Hash, text: text}
		} else {
			a.TraceNote = fmt.Sprintf("This link runs the uploaded trace %s (hash %s), which this browser does not have: upload it again.",
				s.Upload.Name, s.Upload.Hash)
		}
	}
	a.setYAML(s.YAML, "")
}

// guard turns a panic in a handler into a message instead of a dead page
// (vugu stops its render loop when a handler panics).
func (a *App) guard() {
	if r := recover(); r != nil {
		a.Fatal = fmt.Sprintf("internal error: %v", r)
		println(a.Fatal, string(debug.Stack()))
	}
}

// setYAML adopts new config text; field is the control that caused it ("" for
// the YAML view or a whole-config change).
func (a *App) setYAML(text, field string) {
	a.YAML = text
	a.YAMLErr = ""
	for k := range a.FieldErr {
		delete(a.FieldErr, k)
	}
	cfg, err := config.Parse(a.Name, "", []byte(text), nil)
	if err != nil {
		a.Cfg = nil
		var ce *config.Error
		if errors.As(err, &ce) {
			f := state.FieldOfPath(ce.Path)
			switch {
			case f != "":
				a.FieldErr[f] = ce.Error()
			case field != "" && ce.Line == 0:
				a.FieldErr[field] = ce.Error()
			default:
				a.YAMLErr = ce.Error()
			}
			// the control just changed made the config invalid elsewhere
			// (P/D with a mooncake-delta trace or a v0.32 connector): the
			// message goes next to it too
			if field != "" && f != "" && field != f {
				a.FieldErr[field] = ce.Error()
			}
			if f == state.FTrace && strings.Contains(ce.Msg, "engine.mode") {
				a.FieldErr[state.FPD] = ce.Error()
			}
		} else {
			a.YAMLErr = err.Error()
		}
	} else {
		a.Cfg = cfg
		a.Form = state.FormOf(cfg)
		if a.Form.HasG2 {
			a.lastG2 = a.Form
		}
		if a.Form.PD() && a.Form.KVBandwidth > 0 {
			a.lastKV = a.Form.KVBandwidth
		}
		for k := range a.Shown {
			delete(a.Shown, k)
		}
		if p := a.Form.Source.Path; a.Form.Source.Type == config.SourceTrace && !state.IsBuiltinTrace(p) && a.Uploads[p] == nil {
			a.FieldErr[state.FTrace] = fmt.Sprintf("%s is not a built-in trace and has not been uploaded", p)
		}
	}
	a.updateURL()
}

func (a *App) updateURL() {
	s := state.Share{YAML: a.YAML, Compare: a.Compare}
	if a.View == ViewSweep {
		s.View = ViewSweep
	}
	if a.Example != nil {
		s.Example = a.Example.ID
	}
	if a.PV != nil && a.PV.Runs > 0 && !a.Stale() {
		s.Pass, s.Rank = a.PV.Pass, a.PV.Rank
	}
	if a.Cfg != nil && a.Form.Source.Type == config.SourceTrace {
		if u := a.Uploads[a.Form.Source.Path]; u != nil {
			s.Upload = &state.UploadRef{Name: u.Name, Hash: u.Hash}
		}
	}
	a.host.SetFragment(s.Fragment())
	a.Copied = false
}

// ShareURL is the link to the current view.
func (a *App) ShareURL() string {
	s := state.Share{YAML: a.YAML, Compare: a.Compare}
	if a.View == ViewSweep {
		s.View = ViewSweep
	}
	if a.Example != nil {
		s.Example = a.Example.ID
	}
	return a.host.Location() + "#" + s.Fragment()
}

// Value is what control field shows.
func (a *App) Value(field string) string {
	if v, ok := a.Shown[field]; ok {
		return v
	}
	f := a.Form
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	switch field {
	case state.FG1:
		return strconv.Itoa(f.G1)
	case state.FG2:
		if !f.HasG2 {
			return strconv.Itoa(a.lastG2.G2)
		}
		return strconv.Itoa(f.G2)
	case state.FBlockSize:
		return strconv.Itoa(f.BlockSize)
	case state.FReplicas:
		return strconv.Itoa(f.Replicas)
	case state.FDecodeReplicas:
		return strconv.Itoa(f.DecodeReplicas)
	case state.FKVBandwidth:
		if f.KVBandwidth <= 0 {
			return ""
		}
		return num(f.KVBandwidth)
	case state.FPD:
		if f.PD() {
			return "true"
		}
		return "false"
	case state.FAttnDP:
		return strconv.Itoa(f.AttnDP)
	case state.FMaxSeqs:
		return strconv.Itoa(f.MaxSeqs)
	case state.FBudget:
		return strconv.Itoa(f.Budget)
	case state.FPrefillMs:
		return num(f.PrefillMs)
	case state.FDecodeMs:
		return num(f.DecodeMs)
	case state.FD2H:
		return num(f.D2H)
	case state.FH2D:
		return num(f.H2D)
	case state.FConcurrency:
		if f.Source.LoadType != config.LoadConcurrency {
			return ""
		}
		return strconv.Itoa(f.Source.Concurrency)
	}
	return ""
}

// OnField handles a control change.
func (a *App) OnField(field, value string) {
	defer a.guard()
	last := a.lastG2
	last.KVBandwidth = a.lastKV
	next, err := state.Edit(a.YAML, a.Cfg, last, field, value)
	if err != nil {
		a.FieldErr[field] = err.Error()
		a.Shown[field] = value
		return
	}
	a.setYAML(next, field)
	if a.Cfg == nil {
		a.Shown[field] = value
		if field == state.FPD && value == "true" {
			// the form is the last parsed (aggregated) one: show what the
			// toggle wrote
			bw := last.KVBandwidth
			if bw <= 0 {
				bw = state.DefaultKVBandwidth
			}
			a.Shown[state.FReplicas], a.Shown[state.FDecodeReplicas] = "1", "1"
			a.Shown[state.FKVBandwidth] = strconv.FormatFloat(bw, 'f', -1, 64)
		}
	}
}

// Typing keeps what a control shows while the user types (a render in
// between must not overwrite it); OnField commits it.
func (a *App) Typing(field, value string) { a.Shown[field] = value }

// OnYAML handles an edit in the YAML view.
func (a *App) OnYAML(text string) {
	defer a.guard()
	if text == a.YAML {
		return
	}
	a.setYAML(text, "")
}

// OpenLink applies a link's fragment (the user edited or pasted the URL)
// and runs it.
func (a *App) OpenLink(frag string) {
	defer a.guard()
	share, err := state.ParseFragment(frag)
	if err != nil {
		a.RunErr = err.Error()
		return
	}
	a.TraceNote = ""
	a.applyShare(share)
	if a.Cfg != nil && a.TraceNote == "" {
		a.Run()
	}
}

// PickExample opens a guided example and runs it.
func (a *App) PickExample(id string) {
	defer a.guard()
	ex := state.ExampleByID(id)
	if ex == nil {
		return
	}
	a.TraceNote = ""
	a.applyShare(ex.Share())
	a.Run()
}

// PickTrace handles the trace picker: a built-in trace, "gen" (the
// synthetic-session generator) or an uploaded trace's name.
func (a *App) PickTrace(v string) {
	defer a.guard()
	a.ShowGen = v == "gen"
	var next string
	var err error
	switch {
	case v == "gen":
		next, err = state.UseSessions(a.YAML, a.Sessions)
	case state.IsBuiltinTrace(v):
		next, err = state.UseBuiltin(a.YAML, v)
	case a.Uploads[v] != nil:
		u := a.Uploads[v]
		next, err = state.UseUpload(a.YAML, u.Name, u.Format, u.Block, max(1, a.Form.Source.Concurrency))
	default:
		return
	}
	if err != nil {
		a.FieldErr[state.FTrace] = err.Error()
		return
	}
	a.setYAML(next, state.FTrace)
}

// TraceChoice is the trace picker's current value.
func (a *App) TraceChoice() string {
	if a.ShowGen || a.Form.Source.Type == config.SourceSyntheticSession {
		return "gen"
	}
	return a.Form.Source.Path
}

// UploadNames lists uploaded traces.
func (a *App) UploadNames() []string {
	var out []string
	for n := range a.Uploads {
		out = append(out, n)
	}
	// stable order
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// OnGen handles a synthetic-session generator field.
func (a *App) OnGen(field, value string) {
	defer a.guard()
	n, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || n < 0 {
		a.FieldErr["gen"] = "enter a whole number"
		return
	}
	delete(a.FieldErr, "gen")
	s := &a.Sessions
	switch field {
	case "sessions":
		s.Sessions = n
	case "turns":
		s.Turns = n
	case "new":
		s.NewTokens = n
	case "out":
		s.OutputTokens = n
	case "conc":
		s.Concurrency = n
	case "delay":
		s.DelayMs = float64(n)
	}
	next, err := state.UseSessions(a.YAML, *s)
	if err != nil {
		a.FieldErr["gen"] = err.Error()
		return
	}
	a.setYAML(next, state.FTrace)
}

// OnUpload handles the file input.
func (a *App) OnUpload(e vugu.DOMEvent) {
	defer a.guard()
	a.UploadErr, a.UploadNote = "", "reading…"
	a.host.ReadUpload(e, func(name string, text any, data []byte, err error) {
		defer a.guard()
		if err != nil {
			a.UploadErr, a.UploadNote = err.Error(), ""
			return
		}
		u := &Upload{Name: state.SafeName(name), Hash: state.TraceHash(data), Size: len(data), Format: a.UpFormat, Block: a.UpBlock, text: text}
		a.upPending = u
		a.seq++
		a.checkID = a.seq
		a.UploadNote = fmt.Sprintf("checking %s (%s bytes)…", u.Name, state.Thousands(int64(len(data))))
		a.host.Post(map[string]any{"op": proto.OpCheck, "id": a.checkID, "name": u.Name, "text": text,
			"format": u.Format, "blockSize": u.Block})
	})
}

// OnUpFormat and OnUpBlock set how the next upload is read.
func (a *App) OnUpFormat(v string) { a.UpFormat = v }

func (a *App) OnUpBlock(v string) {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		a.UpBlock = n
		delete(a.FieldErr, "upblock")
	} else {
		a.FieldErr["upblock"] = "enter a positive whole number"
	}
}

// ToggleCompare switches compare mode.
func (a *App) ToggleCompare() {
	defer a.guard()
	if a.Compare != nil {
		a.Compare = nil
	} else {
		c := state.DefaultCompare()
		a.Compare = &c
	}
	a.CompareErr = ""
	a.updateURL()
}

// CompareAxis switches the compare axis.
func (a *App) CompareAxis(axis string) {
	defer a.guard()
	if a.Compare == nil {
		return
	}
	if axis == state.AxisG2 {
		a.CompareG2Input(a.CompareG2)
	} else {
		c := state.DefaultCompare()
		a.Compare = &c
		a.CompareErr = ""
	}
	a.updateURL()
}

// CompareToggle adds or removes a connector from the compare set.
func (a *App) CompareToggle(conn string, on bool) {
	defer a.guard()
	if a.Compare == nil || a.Compare.Axis != state.AxisConnector {
		return
	}
	var vals []string
	for _, c := range state.Connectors {
		has := false
		for _, v := range a.Compare.Values {
			has = has || v == c
		}
		if (c == conn && on) || (c != conn && has) {
			vals = append(vals, c)
		}
	}
	a.Compare.Values = vals
	a.CompareErr = ""
	if err := a.Compare.Check(); err != nil {
		a.CompareErr = err.Error()
	}
	a.updateURL()
}

// CompareHas tells whether a connector is in the compare set.
func (a *App) CompareHas(conn string) bool {
	if a.Compare == nil {
		return false
	}
	for _, v := range a.Compare.Values {
		if v == conn {
			return true
		}
	}
	return false
}

// CompareG2Input sets the G2 sizes to compare ("192, 2048, none").
func (a *App) CompareG2Input(text string) {
	defer a.guard()
	a.CompareG2 = text
	c, err := state.ParseCompare(state.AxisG2 + ":" + text)
	if err != nil {
		a.CompareErr = err.Error()
		a.Compare = &state.Compare{Axis: state.AxisG2}
		return
	}
	a.CompareErr = ""
	a.Compare = &c
	a.updateURL()
}

// CanRun tells whether Run is possible now.
func (a *App) CanRun() bool {
	return !a.Running && a.Cfg != nil && (a.Compare == nil || a.CompareErr == "")
}

// Run starts a job for the current config (all compare variants).
func (a *App) Run() {
	defer a.guard()
	if a.Running {
		return
	}
	a.RunErr = ""
	if a.Cfg == nil {
		a.RunErr = "The config has an error; fix it first."
		return
	}
	if a.FieldErr[state.FTrace] != "" {
		a.RunErr = a.FieldErr[state.FTrace]
		return
	}
	var variants []any
	if a.Compare != nil {
		if err := a.Compare.Check(); err != nil {
			a.CompareErr = err.Error()
			return
		}
		for _, v := range a.Compare.Variants(a.Cfg) {
			variants = append(variants, map[string]any{"label": v.Label, "sets": toAny(v.Sets)})
		}
	} else {
		variants = []any{map[string]any{"label": a.singleLabel(), "sets": []any{}}}
	}
	msg := map[string]any{"op": proto.OpRun, "config": a.YAML, "name": a.Name, "variants": variants, "passes": true}
	if a.Form.Source.Type == config.SourceTrace {
		if u := a.Uploads[a.Form.Source.Path]; u != nil {
			msg["traces"] = map[string]any{u.Name: u.text}
		}
	}
	a.seq++
	a.jobID = a.seq
	msg["id"] = a.jobID
	a.runMsg = msg
	a.Running, a.Progress, a.ProgressMsg, a.Status = true, 0, "starting…", ""
	a.runStart = a.host.Now()
	a.host.Post(msg)
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func (a *App) singleLabel() string {
	pd := ""
	if a.Form.PD() {
		pd = "P/D, "
	}
	if !a.Form.HasG2 {
		return pd + "no G2"
	}
	return fmt.Sprintf("%s%s, G2 %d blocks", pd, state.ConnectorLabel(a.Form.Connector), a.Form.G2)
}

// PDOn tells whether the P/D toggle is on (as last edited, even when the
// config it made does not parse).
func (a *App) PDOn() bool { return a.Value(state.FPD) == "true" }

// PDNote explains the P/D toggle's state.
func (a *App) PDNote() string {
	if !a.PDOn() {
		return "split each request: prefill on one worker, then the KV cache moves to a decode worker"
	}
	if a.Cfg == nil || !a.Form.PD() {
		return "a prefill and a decode role, each a copy of the controls"
	}
	if a.Form.KVBytes > 0 {
		return fmt.Sprintf("a prefill and a decode role, each a copy of the controls; the transfer moves %s bytes per token (the prefill role's bytes_per_token)",
			state.Thousands(a.Form.KVBytes))
	}
	return "a prefill and a decode role, each a copy of the controls; no bytes_per_token, so the transfer is untimed"
}

// Cancel stops the running job by replacing the worker.
func (a *App) Cancel() {
	defer a.guard()
	if !a.Running {
		return
	}
	a.Running = false
	a.jobID = -1
	a.upPending, a.fileID = nil, 0
	a.WorkerReady = false
	a.host.RestartWorker()
	a.Status = "Run cancelled."
}

// Deliver handles a worker message (the host holds the render lock). It
// tells whether the page needs a render: progress messages only move the
// progress bar, which the host updates in place (a vugu render walks the
// whole page).
func (a *App) Deliver(m WorkerMsg) (render bool) {
	defer a.guard()
	render = true
	switch m.Type {
	case proto.MsgReady:
		a.WorkerReady = true
		if a.autoRun {
			a.autoRun = false
			a.Run()
		}
	case proto.MsgProgress:
		if m.ID != a.jobID || !a.Running {
			return false
		}
		render = false
		var frac float64
		if m.Total > 0 {
			frac = float64(m.Done) / float64(m.Total)
		}
		n := max(1, m.Variants)
		a.Progress = (float64(m.Variant) + frac) / float64(n)
		a.ProgressMsg = fmt.Sprintf("%s of %s requests", state.Thousands(int64(m.Done)), state.Thousands(int64(m.Total)))
		if n > 1 {
			a.ProgressMsg = fmt.Sprintf("run %d of %d: %s", m.Variant+1, n, a.ProgressMsg)
		}
	case proto.MsgResult:
		if m.ID != a.jobID {
			return
		}
		a.Running = false
		a.Runs++
		a.RunMs = float64(a.host.Now().Sub(a.runStart).Microseconds()) / 1000
		if m.Err != nil {
			a.RunErr = m.Err.Msg
			return
		}
		a.Results = a.Results[:0]
		a.resultsRun, a.resultsMsg = m.ID, a.runMsg
		for _, r := range m.Results {
			res := &Result{Label: r.Label, Err: r.Err, msg: r}
			if r.Err == nil {
				var v proto.View
				err := json.Unmarshal([]byte(r.View), &v)
				if err == nil {
					v.Rows, err = proto.DecodeRows(r.Rows)
				}
				if err != nil {
					res.Err = &ErrInfo{Kind: "internal", Msg: "bad view: " + err.Error()}
				} else {
					res.View = &v
				}
			}
			a.Results = append(a.Results, res)
		}
		a.Selected, a.Page = 0, 0
		for i, r := range a.Results {
			if r.View != nil {
				a.Selected = i
				break
			}
		}
		a.Status = fmt.Sprintf("Done in %s ms.", state.Ms(a.RunMs))
		a.chartDirty = true
		a.startPassView(m)
	case proto.MsgChecked:
		if a.upPending == nil || m.ID != a.checkID {
			return false
		}
		u := a.upPending
		a.upPending = nil
		if m.Err != nil {
			a.UploadErr, a.UploadNote = m.Err.Msg, ""
			return
		}
		if err := json.Unmarshal([]byte(m.Info), &u.Info); err != nil {
			a.UploadErr = err.Error()
			return
		}
		a.Uploads[u.Name] = u
		if u.Size <= MaxStoredTrace {
			a.host.SaveUpload(u.Hash, u.Name, u.text)
		}
		a.UploadNote = fmt.Sprintf("%s: %d sessions, %s requests (hash %s)", u.Name, u.Info.Sessions,
			state.Thousands(int64(u.Info.Requests)), u.Hash)
		a.TraceNote = ""
		a.PickTrace(u.Name)
	case proto.OpSweepPlan, proto.OpSweepPoint, proto.OpSweepCollect:
		return a.sweepDeliver(m)
	case proto.MsgIndex:
		return a.pvIndex(m)
	case proto.MsgFrame:
		return a.pvFrames(m)
	case proto.MsgFile:
		if m.ID != a.fileID || a.fileID == 0 {
			return false
		}
		a.fileID = 0
		if m.Err != nil {
			a.Status = a.fileName + ": " + m.Err.Msg
			return
		}
		a.Status = ""
		a.host.Download(a.fileName, m.Text)
	}
	return render
}

// SimMs is the worker's replay time of the shown results (Σ over runs).
func (a *App) SimMs() float64 {
	var t float64
	for _, r := range a.Results {
		if r.View != nil {
			t += r.View.ElapsedMs
		}
	}
	return t
}

// Busy tells whether a run is in progress or about to start.
func (a *App) Busy() bool { return a.Running || (a.autoRun && a.Cfg != nil) }

// configOf is the YAML of a run message.
func configOf(msg map[string]any) string { s, _ := msg["config"].(string); return s }

// Stale tells whether the config changed since the shown results ran. The
// results' config is that of their own run message, taken when they
// arrive, so during a run (and after a failed or cancelled one) the old
// results stay stale and their pass view stays closed.
func (a *App) Stale() bool { return len(a.Results) > 0 && configOf(a.resultsMsg) != a.YAML }

// StaleNote says why the shown results are stale.
func (a *App) StaleNote() string {
	if a.Running && configOf(a.runMsg) == a.YAML {
		return "These results are from the previous config; the new run is under way."
	}
	return "The config changed since these results; press Run to update them."
}

// Sel is the selected result (nil when there is none).
func (a *App) Sel() *Result {
	if a.Selected < 0 || a.Selected >= len(a.Results) {
		return nil
	}
	return a.Results[a.Selected]
}

// Select shows result i's details.
func (a *App) Select(i int) {
	if i >= 0 && i < len(a.Results) {
		a.Selected, a.Page = i, 0
	}
}

// SortBy sorts the request table (a second click reverses).
func (a *App) SortBy(key string) {
	if a.SortKey == key {
		a.SortDesc = !a.SortDesc
	} else {
		a.SortKey, a.SortDesc = key, key == "ttft" || key == "recomputed"
	}
	a.Page = 0
}

// SortMark is the header's sort arrow.
func (a *App) SortMark(key string) string {
	if a.SortKey != key {
		return ""
	}
	if a.SortDesc {
		return " ▼"
	}
	return " ▲"
}

// PageRows is the visible page of the sorted request table.
func (a *App) PageRows() []proto.Row {
	r := a.Sel()
	if r == nil || r.View == nil {
		return nil
	}
	rows := state.SortRows(r.View.Rows, a.SortKey, a.SortDesc)
	from := min(a.Page*PageRows, len(rows))
	return rows[from:min(from+PageRows, len(rows))]
}

// Pages is the number of table pages.
func (a *App) Pages() int {
	r := a.Sel()
	if r == nil || r.View == nil {
		return 0
	}
	return (len(r.View.Rows) + PageRows - 1) / PageRows
}

// Turn the table page.
func (a *App) Turn(d int) { a.Page = max(0, min(a.Pages()-1, a.Page+d)) }

// Download offers the selected run's report file: prediction.json at
// once, the larger files after the worker has encoded them.
func (a *App) Download(kind string) {
	defer a.guard()
	r := a.Sel()
	if r == nil || r.View == nil {
		return
	}
	name := kind
	if len(a.Results) > 1 {
		name = slug(r.Label) + "-" + name
	}
	if kind == "prediction.json" {
		a.host.Download(name, r.msg.Prediction)
		return
	}
	a.seq++
	a.fileID, a.fileName = a.seq, name
	a.Status = "preparing " + name + "…"
	a.host.Post(map[string]any{"op": proto.OpFile, "id": a.fileID, "run": a.resultsRun, "variant": a.Selected,
		"kind": kind, "spec": a.resultsMsg})
}

// HasRecord tells whether the selected run kept a per-pass record.
func (a *App) HasRecord() bool {
	return a.PV != nil && a.Selected < len(a.PV.Meta) && a.PV.Meta[a.Selected].Recorded && !a.Stale()
}

// RecordTitle explains the passes.jsonl button.
func (a *App) RecordTitle() string {
	if a.HasRecord() {
		return "the per-pass record of the selected run (kvsim inspect and kvsim diff read it)"
	}
	if a.PVNote != "" {
		return a.PVNote
	}
	return "run a config first"
}

// DownloadConfig offers the YAML as a file the CLI reads.
func (a *App) DownloadConfig() { a.host.Download("config.yaml", a.YAML) }

func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// CopyLink copies the share link.
func (a *App) CopyLink() {
	a.host.Copy(a.ShareURL())
	a.Copied = true
}

// AfterRender draws the canvases. vugu sets every attribute of every
// element on each render, and setting a canvas's width clears it, so each
// canvas is pushed again after every render (one copy of a kept Go
// image); the image itself is redrawn only when its data or size changed.
func (a *App) AfterRender() {
	defer a.guard()
	w := chartW
	if pw := a.host.Width("chart"); pw > 0 {
		w = max(360, min(1600, pw))
	}
	if a.chart == nil || a.chart.Rect.Dx() != w {
		a.chart = image.NewRGBA(image.Rect(0, 0, w, chartH))
		a.chartDirty = true
	}
	if a.chartDirty {
		a.chartDirty = false
		var series [][]proto.Turn
		var labels []string
		for _, r := range a.Results {
			if r.View != nil {
				series = append(series, r.View.Turns)
				labels = append(labels, r.Label)
			}
		}
		draw.TurnChart(a.chart, series, labels)
	}
	a.host.Blit("chart", a.chart)
	a.pvDraw()
	a.sweepDraw()
}

// startPassView opens the pass view on new results: at the link's pass,
// or where the guided example points, or at pass 1.
func (a *App) startPassView(m WorkerMsg) {
	a.PV, a.PVNote = nil, ""
	var meta []proto.PassMeta
	if m.Passes != "" {
		if err := json.Unmarshal([]byte(m.Passes), &meta); err != nil {
			a.PVNote = "bad pass metadata: " + err.Error()
			return
		}
	}
	notes := make([]string, len(m.Results))
	for i, r := range m.Results {
		notes[i] = r.RecordNote
		if r.RecordNote != "" {
			a.PVNote = r.RecordNote
		}
	}
	if len(meta) == 0 {
		return
	}
	focus, focusRun := "", 0
	if a.Example != nil && configOf(a.resultsMsg) == a.Example.YAML() {
		focus, focusRun = a.Example.Focus, a.Example.FocusRun
	}
	a.PV = newPassView(meta, notes, focus, focusRun, a.linkPass, a.linkRank)
	a.linkPass, a.linkRank = 0, 0
	a.pvSeek()
	a.updateURL()
}

// ChartWidth and ChartHeight are the chart canvas's size.
func (a *App) ChartWidth() int {
	if a.chart == nil {
		return chartW
	}
	return a.chart.Rect.Dx()
}

func (a *App) ChartHeight() int { return chartH }

// Resized redraws what depends on the window size.
func (a *App) Resized() {
	a.chartDirty = true
	a.Sw.dirty = true
}

// Pct is the progress bar width.
func (a *App) Pct() string { return strconv.FormatFloat(a.Progress*100, 'f', 1, 64) + "%" }
