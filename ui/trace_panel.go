package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/vugu/vugu"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// MaxStoredTrace is the largest uploaded trace kept in the browser's
// storage for reloads.
const MaxStoredTrace = 2 << 20

// TracePanel is the config panel's trace section: the trace picker (a
// built-in trace, an uploaded one or the synthetic-session generator), the
// generator's inputs, and uploads, which the worker checks before the
// picker offers them. It edits the panel's YAML; its errors are the
// panel's (state.FTrace, FGen, FUpBlock).
type TracePanel struct {
	Panel *ConfigPanel

	// Uploads are the uploaded traces, by the path the config uses.
	Uploads    map[string]*Upload
	UploadErr  string
	UploadNote string
	// UpFormat and UpBlock say how the next upload is read.
	UpFormat string
	UpBlock  int
	// UpOpen keeps the upload section open while it is used (the format
	// and the block size are set in one visit).
	UpOpen   bool
	Sessions state.SessionSpec
	ShowGen  bool
	// Note explains a trace the page cannot run (e.g. an uploaded trace
	// the link names but this browser lacks).
	Note string

	// Fetch follows the download of the built-in Mooncake trace, which
	// the page does not embed; mooncake is its text once here.
	Fetch    state.TraceFetch
	mooncake any

	pending *Upload // the upload the worker is checking
	checkID int
}

// Upload is an uploaded trace.
type Upload struct {
	Name, Hash string
	Size       int
	Format     string
	Block      int
	Info       proto.TraceInfo
	text       any // a JavaScript string in the browser
}

func newTracePanel(p *ConfigPanel) *TracePanel {
	return &TracePanel{Panel: p, Uploads: map[string]*Upload{}, UpFormat: config.FormatMooncakeDelta, UpBlock: 16,
		Sessions: state.DefaultSessions}
}

// restore takes back the uploaded trace a link names from the browser's
// storage, or notes that it is missing.
func (c *TracePanel) restore(ref *state.UploadRef) {
	c.Note = ""
	if ref == nil {
		return
	}
	if text, ok := c.Panel.page.host.LoadUpload(ref.Hash); ok {
		c.Uploads[ref.Name] = &Upload{Name: ref.Name, Hash: ref.Hash, text: text}
		return
	}
	c.Note = fmt.Sprintf("This link runs the uploaded trace %s (hash %s), which this browser does not have: upload it again.",
		ref.Name, ref.Hash)
}

// current is the uploaded trace the parsed config reads (nil: none).
func (c *TracePanel) current() *Upload {
	p := c.Panel
	if p.Cfg == nil || p.Form.Source.Type != config.SourceTrace {
		return nil
	}
	if p.Form.Source.Path == state.MooncakeTrace && c.Uploads[state.MooncakeTrace] == nil {
		if c.Fetch.Phase != state.FetchDone {
			return nil
		}
		return &Upload{Name: state.MooncakeTrace, text: c.mooncake}
	}
	return c.Uploads[p.Form.Source.Path]
}

// Mooncake tells whether the config reads the built-in Mooncake trace.
func (c *TracePanel) Mooncake() bool {
	f := c.Panel.Form
	return !c.ShowGen && c.Panel.Cfg != nil && f.Source.Type == config.SourceTrace && f.Source.Path == state.MooncakeTrace &&
		c.Uploads[state.MooncakeTrace] == nil
}

// MooncakeNote says how much of the Mooncake trace the config runs.
func (c *TracePanel) MooncakeNote() string {
	if !c.Mooncake() {
		return ""
	}
	return state.MooncakeNote(c.Panel.Cfg)
}

// needMooncake starts fetching the Mooncake trace when the config reads it
// and the page has not got it (nor is fetching it, nor failed: then Retry
// starts it again).
func (c *TracePanel) needMooncake() {
	if c.Mooncake() && c.Fetch.Phase == state.FetchIdle {
		c.fetchMooncake()
	}
}

// Retry fetches the Mooncake trace again after a failure.
func (c *TracePanel) Retry() {
	defer c.Panel.page.guard()
	if c.Fetch.Phase == state.FetchFailed {
		c.fetchMooncake()
	}
}

// fetchMooncake asks the host for the gzipped trace.
func (c *TracePanel) fetchMooncake() {
	c.Fetch.Start()
	c.Panel.page.host.FetchTrace(state.MooncakeURL, state.FetchStall,
		func(loaded, total int64) { c.Fetch.Progress(loaded, total) },
		func(text any, err *state.FetchError) {
			defer c.Panel.page.guard()
			if err != nil {
				c.Fetch.Fail(*err)
				return
			}
			c.mooncake = text
			c.Fetch.Done()
			if r := c.Panel.page.Runs; r.autoRun && r.WorkerReady {
				r.autoRun = false
				r.Run()
			}
		})
}

// Blocked says why Run must wait for the trace ("" when it need not).
func (c *TracePanel) Blocked() string {
	if !c.Mooncake() {
		return ""
	}
	switch c.Fetch.Phase {
	case state.FetchDone:
		return ""
	case state.FetchFailed:
		return c.Fetch.Err
	}
	return "the Mooncake trace is still being fetched"
}

// ref names the uploaded trace the config reads, for the link.
func (c *TracePanel) ref() *state.UploadRef {
	if u := c.current(); u != nil {
		return &state.UploadRef{Name: u.Name, Hash: u.Hash}
	}
	return nil
}

// attach adds the uploaded trace the config reads (if any) to a message's
// texts and names it for the job.
func (c *TracePanel) attach(m *Message) []proto.TraceText {
	if u := c.current(); u != nil {
		return []proto.TraceText{{Path: u.Name, Text: m.text(u.text)}}
	}
	return nil
}

// Pick handles the trace picker: a built-in trace, "gen" (the
// synthetic-session generator) or an uploaded trace's name.
func (c *TracePanel) Pick(v string) {
	defer c.Panel.page.guard()
	p := c.Panel
	c.ShowGen = v == "gen"
	var next string
	var err error
	switch {
	case v == "gen":
		next, err = state.UseSessions(p.YAML, c.Sessions)
	case v == state.MooncakeTrace:
		// the preset replaces the config: the trace's block size, load and
		// engine go together. It has no G2 tier, so a compare of connectors
		// or G2 sizes cannot run on it: single mode (a routing compare
		// stays, the preset has 4 replicas)
		next = state.MooncakePreset()
		if cmp := p.page.Compare; cmp.Set != nil && cmp.Set.Axis != state.AxisRouting {
			cmp.Set, cmp.Err = nil, ""
		}
	case state.IsBuiltinTrace(v):
		next, err = state.UseBuiltin(p.YAML, v)
	case c.Uploads[v] != nil:
		u := c.Uploads[v]
		next, err = state.UseUpload(p.YAML, u.Name, u.Format, u.Block, max(1, p.Form.Source.Concurrency))
	default:
		return
	}
	if err != nil {
		p.errs[state.FTrace] = err.Error()
		return
	}
	p.setYAML(next, state.FTrace)
}

// Choice is the trace picker's current value.
func (c *TracePanel) Choice() string {
	if c.ShowGen || c.Panel.Form.Source.Type == config.SourceSyntheticSession {
		return "gen"
	}
	return c.Panel.Form.Source.Path
}

// Agentic tells whether the config reads an agentic trace, whose load
// controls the panel then shows.
func (c *TracePanel) Agentic() bool {
	return c.Panel.Form.Source.Type == config.SourceTrace && config.Agentic(c.Panel.Form.Source.Format)
}

// UploadNames lists the uploaded traces by name.
func (c *TracePanel) UploadNames() []string {
	out := make([]string, 0, len(c.Uploads))
	for n := range c.Uploads {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// missing names a trace path the config reads that the picker does not
// offer.
func (c *TracePanel) missing() string {
	f := c.Panel.Form
	if c.ShowGen || f.Source.Type != config.SourceTrace {
		return ""
	}
	if state.IsBuiltinTrace(f.Source.Path) || c.Uploads[f.Source.Path] != nil || f.Source.Path == state.MooncakeTrace {
		return ""
	}
	return f.Source.Path
}

// OnGen handles an input of the synthetic-session generator.
func (c *TracePanel) OnGen(g state.GenField, value string) {
	defer c.Panel.page.guard()
	p := c.Panel
	n, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || n < 0 {
		p.errs[state.FGen] = "enter a whole number"
		return
	}
	p.errs[state.FGen] = ""
	c.Sessions.Set(g, n)
	next, err := state.UseSessions(p.YAML, c.Sessions)
	if err != nil {
		p.errs[state.FGen] = err.Error()
		return
	}
	p.setYAML(next, state.FTrace)
}

// OnUpload reads the file the file input chose and asks the worker to
// check it.
func (c *TracePanel) OnUpload(e vugu.DOMEvent) {
	page := c.Panel.page
	defer page.guard()
	c.UploadErr, c.UploadNote = "", "reading…"
	page.host.ReadUpload(e, func(name string, text any, data []byte, err error) {
		defer page.guard()
		if err != nil {
			c.UploadErr, c.UploadNote = err.Error(), ""
			return
		}
		u := &Upload{Name: state.SafeName(name), Hash: state.TraceHash(data), Size: len(data), Format: c.UpFormat, Block: c.UpBlock, text: text}
		c.pending = u
		c.checkID = page.nextID()
		c.UploadNote = fmt.Sprintf("checking %s (%s bytes)…", u.Name, state.Thousands(int64(len(data))))
		m := Message{Req: proto.Request{Op: proto.OpCheck, ID: c.checkID}}
		m.Req.Check = &proto.CheckJob{Name: u.Name, Text: m.text(text), Format: u.Format, BlockSize: u.Block}
		page.host.Post(m)
	})
}

// OnUpToggle follows the upload section being opened or closed.
func (c *TracePanel) OnUpToggle(open bool) { c.UpOpen = open }

// OnUpFormat sets the next upload's trace format; a weka corpus takes its
// own block size unless one is entered.
func (c *TracePanel) OnUpFormat(v string) {
	c.UpOpen = true
	c.Panel.errs[state.FUpBlock] = ""
	if v == config.FormatWeka && c.UpFormat != v {
		c.UpBlock = 0
	} else if c.UpBlock == 0 && v != config.FormatWeka {
		c.UpBlock = 16
	}
	c.UpFormat = v
}

// OnUpBlock sets the next upload's tokens per hash id (weka: 0 takes the
// corpus's block_size).
func (c *TracePanel) OnUpBlock(v string) {
	c.UpOpen = true
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && (n > 0 || n == 0 && c.UpFormat == config.FormatWeka) {
		c.UpBlock = n
		c.Panel.errs[state.FUpBlock] = ""
	} else if c.UpFormat == config.FormatWeka {
		c.Panel.errs[state.FUpBlock] = "tokens per hash id: enter a whole number, 0 for the corpus's block_size"
	} else {
		c.Panel.errs[state.FUpBlock] = "tokens per hash id: enter a positive whole number"
	}
}

// cancelCheck forgets the upload in the worker (it is being replaced).
func (c *TracePanel) cancelCheck() { c.pending = nil }

// checked takes the worker's check of an upload: the picker offers it and
// the config reads it.
func (c *TracePanel) checked(m WorkerMsg) bool {
	if c.pending == nil || m.ID != c.checkID {
		return false
	}
	u := c.pending
	c.pending = nil
	if m.Error != nil {
		c.UploadErr, c.UploadNote = m.Error.Msg, ""
		return true
	}
	if m.Checked == nil {
		c.UploadErr = "the worker's check of " + u.Name + " is empty"
		return true
	}
	u.Info = *m.Checked
	c.Uploads[u.Name] = u
	if u.Size <= MaxStoredTrace {
		c.Panel.page.host.SaveUpload(u.Hash, u.Name, u.text)
	}
	c.UploadNote = fmt.Sprintf("%s: %s sessions, %s requests (hash %s)", u.Name, state.Thousands(int64(u.Info.Sessions)),
		state.Thousands(int64(u.Info.Requests)), u.Hash)
	c.Note = ""
	c.Pick(u.Name)
	return true
}
