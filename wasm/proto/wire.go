package proto

import (
	"encoding/json"
	"fmt"
)

// The messages between the page and a simulation worker (docs/ui.md, "How
// the page and the worker talk"). Each is one Request or one Reply,
// encoded once as JSON with encoding/json and posted in an envelope beside
// the payloads that do not travel as JSON:
//
//   - binary payloads (EncodeRows, EncodeTimeline, frames), as Uint8Arrays,
//     named by a BinRef;
//   - texts the receiver keeps as they are (uploaded traces, report files,
//     a point's summary), as JavaScript strings, named by a TextRef, so a
//     big report never passes through the page's Go heap.
//
// The Op of a request and the Type of a reply say which of their payload
// fields is set; a reply to a request that failed carries Error (and for
// some types a payload that places the error).

// A BinRef names a binary payload of a message: n is the n-th (from 1) of
// its envelope's binary list; 0 is none.
type BinRef int

// A TextRef names a text of a message: n is the n-th (from 1) of its
// envelope's text list; 0 is none.
type TextRef int

// OpInit starts a worker: its envelope carries the compiled sim.wasm
// beside the request (page → worker only, answered by MsgReady).
const OpInit = "init"

// A Request is one message from the page to a worker.
type Request struct {
	Op string `json:"op"`
	ID int    `json:"id"`

	Run          *RunJob          `json:"run,omitempty"`
	Check        *CheckJob        `json:"check,omitempty"`
	File         *FileJob         `json:"file,omitempty"`
	Index        *IndexJob        `json:"index,omitempty"`
	Seek         *SeekJob         `json:"seek,omitempty"`
	SweepPlan    *SweepPlanJob    `json:"sweep_plan,omitempty"`
	SweepPoint   *SweepPointJob   `json:"sweep_point,omitempty"`
	SweepCollect *SweepCollectJob `json:"sweep_collect,omitempty"`
	Merge        *MergeJob        `json:"merge,omitempty"`
}

// WindowPasses is how many passes of each rank the worker keeps of a run
// too long for a whole per-pass record: its first ones, or those from
// RunJob.FromPass.
const WindowPasses = 2000

// A RunJob runs a config: every variant (compare mode), or once with the
// job's own overrides when there is none.
type RunJob struct {
	Config    string    `json:"config"` // the YAML text, as the CLI reads it
	Name      string    `json:"name"`   // the config's name in error messages
	Overrides []string  `json:"overrides,omitempty"`
	Variants  []Variant `json:"variants"`
	// Traces are uploaded traces by the path the config names; other
	// paths are the built-in examples.
	Traces []TraceText `json:"traces,omitempty"`
	// Requests asks for requests.jsonl with the result, Passes for the
	// per-pass records (the pass view).
	Requests  bool  `json:"requests,omitempty"`
	Passes    bool  `json:"passes,omitempty"`
	MaxPasses int64 `json:"max_passes,omitempty"`
	// FromPass is the first pass of the window of WindowPasses passes a
	// run too long for a whole record keeps of each rank (0: pass 1; see
	// replay.Capture.LargeWindow).
	FromPass int `json:"from_pass,omitempty"`
	// PassesOnly asks for the per-pass records alone (the pass view moving
	// its window): a run whose record keeps a window stops once every rank
	// has run the window's last pass (replay.Capture.StopAfterWindow), and
	// the outcomes carry no results, only their record notes and errors
	// (the page keeps the results it shows). The kept report files of the
	// job are its passes only.
	PassesOnly bool `json:"passes_only,omitempty"`
	// FanOut: when the runs of this compare keep a window of their records
	// (replay.KeepsWindow), the worker says so with a Progress of FanOut
	// before it runs, then serves the job as PassesOnly; the page runs each
	// variant for its results in a worker of its own (docs/ui.md,
	// "Compared long runs").
	FanOut bool `json:"fan_out,omitempty"`
	// Part, when set, runs one part of the job's one variant split across
	// workers (replay.Job.Part): the outcome then carries the part
	// (Outcome.Part) for a MergeJob instead of results.
	Part *Part `json:"part,omitempty"`
	// Debug replaces the run with a test-only job; the worker refuses it
	// unless a test set its hook (self.kvsimDebug in the worker).
	Debug *DebugJob `json:"debug,omitempty"`
}

// A Part is part Index of a run split into Of (replay.Part).
type Part struct {
	Of    int `json:"of"`
	Index int `json:"index"`
}

// A MergeJob makes the results of Spec (a RunJob of one variant, its
// traces texts of this message) from the parts its Part runs answered
// (Outcome.Part, binary payloads of this message, in any order). Its reply
// is a MsgResult. A part that saw a worker held back makes the error kind
// ErrKindHeldBack: the page then runs the variant whole.
type MergeJob struct {
	Spec  RunJob   `json:"spec"`
	Parts []BinRef `json:"parts"`
}

// ErrKindHeldBack is a MergeJob's error kind when its run must run whole
// (replay.ErrHeldBack).
const ErrKindHeldBack = "held_back"

// A DebugJob is a test-only run: it reports progress on run Variant of
// the job's variants, then allocates AllocMiB MiB blocks and keeps them
// until the Go runtime runs out of memory and the program dies (the
// browser test of the page's out-of-memory message, e2e TestOutOfMemory).
type DebugJob struct {
	Variant  int `json:"variant"`
	AllocMiB int `json:"alloc_mib"`
}

// A TraceText is an uploaded trace: the path the config names and its
// text.
type TraceText struct {
	Path string  `json:"path"`
	Text TextRef `json:"text"`
}

// A CheckJob reads an uploaded trace the way a run would.
type CheckJob struct {
	Name      string  `json:"name"`
	Text      TextRef `json:"text"`
	Format    string  `json:"format"`
	BlockSize int     `json:"block_size"`
}

// A FileJob asks for a report file (FileRequests, FilePasses) of variant
// Variant of run job Run. Spec is that run; a worker that no longer holds
// it (it was replaced) replays it, which gives the same bytes. The
// traces of Spec are texts of this message.
type FileJob struct {
	Run     int     `json:"run"`
	Variant int     `json:"variant"`
	Kind    string  `json:"kind"`
	Spec    *RunJob `json:"spec"`
}

// Report files the page can ask for after a run.
const (
	FileRequests = "requests.jsonl"
	FilePasses   = "passes.jsonl"
)

// An IndexJob indexes the kept run's passes a little further (the
// worker's own loop sends it; ID is the run's).
type IndexJob struct{}

// A SeekJob asks for one pass per variant of the kept run Run on one rank
// (a pass of 0 skips the variant).
type SeekJob struct {
	Run    int   `json:"run"`
	Rank   int   `json:"rank"`
	Passes []int `json:"passes"`
}

// A SweepSpec is a sweep as the page describes it: the config text and its
// name, --set overrides, the --vary arguments and uploaded traces. Every
// sweep message carries it, so any worker can serve any of them.
type SweepSpec struct {
	Config string      `json:"config"`
	Name   string      `json:"name"`
	Sets   []string    `json:"sets,omitempty"`
	Vary   []string    `json:"vary"`
	Traces []TraceText `json:"traces,omitempty"`
}

// A SweepPlanJob validates a sweep (answered by a SweepPlan).
type SweepPlanJob struct {
	Spec SweepSpec `json:"spec"`
}

// A SweepPointJob evaluates point Index of a sweep.
type SweepPointJob struct {
	Spec  SweepSpec `json:"spec"`
	Index int       `json:"index"`
}

// A SweepCollectJob gathers the points' summaries (texts, in point order)
// into the sweep's files.
type SweepCollectJob struct {
	Spec      SweepSpec `json:"spec"`
	Summaries []TextRef `json:"summaries"`
}

// A Reply is one message from a worker to the page.
type Reply struct {
	Type  string `json:"type"`
	ID    int    `json:"id"`
	Error *Error `json:"error,omitempty"`

	Ready      *ReadyReply `json:"ready,omitempty"`
	Progress   *Progress   `json:"progress,omitempty"`
	Result     *RunResult  `json:"result,omitempty"`
	Checked    *TraceInfo  `json:"checked,omitempty"`
	File       *FileReply  `json:"file,omitempty"`
	Index      *IndexReply `json:"index,omitempty"`
	Frame      *FrameReply `json:"frame,omitempty"`
	SweepPlan  *SweepPlan  `json:"sweep_plan,omitempty"`
	SweepPoint *PointReply `json:"sweep_point,omitempty"`
	SweepFiles *SweepFiles `json:"sweep_files,omitempty"`
}

// A ReadyReply is what the page learns when the worker starts: each
// connector profile's policy, from the rules table.
type ReadyReply struct {
	Policies []Policy `json:"policies"`
}

// Policy is a connector profile's G2 policy for people
// (core/replay.Policies): what it evicts first, when it touches entries,
// what it stores, and the three in one line.
type Policy struct {
	Connector string `json:"connector"`
	Evicts    string `json:"evicts"`
	Touches   string `json:"touches"`
	Stores    string `json:"stores"`
	Line      string `json:"line"`
}

// An Error is an error as the page shows it: Msg is exactly the CLI's
// message; Path, Line and Col place it next to the control it concerns.
type Error struct {
	Kind    string `json:"kind"` // "config", "trace", "run", "sweep", "internal"
	Msg     string `json:"msg"`
	Path    string `json:"path,omitempty"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Variant string `json:"variant,omitempty"`
}

// Progress is a run's progress: Done of Total requests of variant
// Variant of Variants.
type Progress struct {
	Variant  int `json:"variant"`
	Variants int `json:"variants"`
	Done     int `json:"done"`
	Total    int `json:"total"`
	// FanOut: the job's runs go to workers of their own (RunJob.FanOut);
	// this worker's reply will carry their records alone.
	FanOut bool `json:"fan_out,omitempty"`
	// Parts is, with FanOut, how many parts each variant may be split into
	// (replay.Parts: 1 when it cannot be), for workers of their own.
	Parts []int `json:"parts,omitempty"`
}

// A RunResult is a run job's outcome: one per variant, and the per-pass
// records' shape when runs kept them (the worker then indexes them and
// sends IndexReplies).
type RunResult struct {
	Results []Outcome  `json:"results"`
	Passes  []PassMeta `json:"passes,omitempty"`
	// Indexing: the worker indexes the passes next.
	Indexing bool `json:"indexing,omitempty"`
}

// An Outcome is one variant of a run: its view (whose Rows travel as a
// binary EncodeRows payload), its prediction.json and, when asked,
// requests.jsonl; or its error.
type Outcome struct {
	Label      string  `json:"label"`
	View       *View   `json:"view,omitempty"`
	Rows       BinRef  `json:"rows,omitempty"`
	Prediction TextRef `json:"prediction,omitempty"`
	Requests   TextRef `json:"requests,omitempty"`
	// RecordNote says why the variant kept no per-pass record.
	RecordNote string `json:"record_note,omitempty"`
	Error      *Error `json:"error,omitempty"`
	// Part is the encoded part a RunJob.Part run answers (replay.Output.Part).
	Part BinRef `json:"part,omitempty"`
}

// A FileReply is a report file's text.
type FileReply struct {
	Kind string  `json:"kind"`
	Text TextRef `json:"text"`
}

// An IndexReply is the timeline index's progress; the last one (Done)
// carries the timelines, [variant][rank] EncodeTimeline payloads, and Ms,
// the worker's time spent indexing. Stale: the run is no longer kept.
type IndexReply struct {
	Done      bool       `json:"done"`
	Stale     bool       `json:"stale,omitempty"`
	Indexed   int        `json:"indexed"`
	Total     int        `json:"total"`
	Ms        float64    `json:"ms,omitempty"`
	Timelines [][]BinRef `json:"timelines,omitempty"`
	// Divergences compare every later run with the first, rank by rank
	// (the last reply only).
	Divergences []Divergence `json:"divergences,omitempty"`
	// Warm, on the replies that follow the last step of a single long
	// run's index, says how the warm-up of its checkpoints goes: the
	// worker runs the run on to its end between seeks, taking the engine
	// checkpoints later window moves start from (docs/ui.md, "Window
	// moves from checkpoints").
	Warm *WarmReply `json:"warm,omitempty"`
}

// A WarmReply is one step of a checkpoint warm-up.
type WarmReply struct {
	Done        bool   `json:"done"`
	Checkpoints int    `json:"checkpoints"` // kept now
	Error       string `json:"error,omitempty"`
}

// A FrameReply is one frame per variant of a seek (nil: none asked).
type FrameReply struct {
	Rank   int         `json:"rank"`
	Frames []*FrameOut `json:"frames"`
}

// A FrameOut is one variant's frame: the binary Frame and its pass
// information, or why there is none.
type FrameOut struct {
	Bin   BinRef     `json:"bin,omitempty"`
	Meta  *FrameMeta `json:"meta,omitempty"`
	Error string     `json:"error,omitempty"`
}

// A PointReply is one evaluated point: its summary as `kvsim predict`
// writes it (a text, kept as it is for the collect) and its sizing
// columns. A failed point's reply carries the Index too.
type PointReply struct {
	Index   int        `json:"index"`
	Summary TextRef    `json:"summary,omitempty"`
	Point   SweepPoint `json:"point"`
}

// SweepFiles are a finished sweep's files (texts) and plotted curves.
type SweepFiles struct {
	CSV    TextRef     `json:"csv"`
	JSON   TextRef     `json:"json"`
	Curves SweepCurves `json:"curves"`
}

// ReplyType is the type of the reply to a request op ("" for an unknown
// op).
func ReplyType(op string) string {
	switch op {
	case OpRun, OpMerge:
		return MsgResult
	case OpCheck:
		return MsgChecked
	case OpFile:
		return MsgFile
	case OpIndex:
		return MsgIndex
	case OpSeek:
		return MsgFrame
	case OpInit:
		return MsgReady
	case OpSweepPlan, OpSweepPoint, OpSweepCollect:
		return op
	}
	return ""
}

// EncodeRequest encodes a request.
func EncodeRequest(r *Request) ([]byte, error) { return json.Marshal(r) }

// EncodeReply encodes a reply.
func EncodeReply(r *Reply) ([]byte, error) { return json.Marshal(r) }

// header is what a message that does not decode may still tell: its kind
// and id.
type header struct {
	Op   string `json:"op"`
	Type string `json:"type"`
	ID   int    `json:"id"`
}

// readHeader reads what it can of a message that does not decode: each
// of its fields alone, so that one of the wrong type spoils only itself.
func readHeader(b []byte) header {
	var raw struct {
		Op, Type, ID json.RawMessage
	}
	var h header
	if json.Unmarshal(b, &raw) == nil {
		_ = json.Unmarshal(raw.Op, &h.Op)
		_ = json.Unmarshal(raw.Type, &h.Type)
		_ = json.Unmarshal(raw.ID, &h.ID)
	}
	return h
}

// DecodeRequest decodes a request. When it does not decode, the error is
// the reply to send: the reply type of its op (as far as it can be read)
// and its id, with an internal error.
func DecodeRequest(b []byte) (Request, *Reply) {
	var r Request
	err := json.Unmarshal(b, &r)
	if err == nil && r.Op == "" {
		err = fmt.Errorf("no op")
	}
	if err == nil {
		return r, nil
	}
	h := readHeader(b)
	typ := ReplyType(h.Op)
	if typ == "" {
		typ = MsgResult
	}
	return r, &Reply{Type: typ, ID: h.ID, Error: &Error{Kind: "internal", Msg: "the worker could not read a message: " + err.Error()}}
}

// DecodeReply decodes a reply. One that does not decode becomes a reply
// of the type and id it names (as far as they can be read) with an
// internal error, so the page shows the problem where the answer was
// expected.
func DecodeReply(b []byte) Reply {
	var r Reply
	err := json.Unmarshal(b, &r)
	if err == nil && r.Type == "" {
		err = fmt.Errorf("no type")
	}
	if err == nil {
		return r
	}
	h := readHeader(b)
	return Reply{Type: h.Type, ID: h.ID, Error: &Error{Kind: "internal", Msg: "the page could not read a worker message: " + err.Error()}}
}
