package proto

// Sweep operations and their replies (docs/ui.md, "Sweeps"). The page runs
// a sweep in several workers: one answers OpSweepPlan, every worker then
// evaluates points by index (OpSweepPoint), and one gathers the summaries
// into the sweep's files (OpSweepCollect). Every message carries the
// sweep's spec, so any worker can serve any of them. A reply's type is
// its op's name.
const (
	OpSweepPlan    = "sweep-plan"    // SweepPlanJob → SweepPlan
	OpSweepPoint   = "sweep-point"   // SweepPointJob → PointReply
	OpSweepCollect = "sweep-collect" // SweepCollectJob → SweepFiles
)

// MaxSweepPoints bounds the grids the browser runs (kvsim sweep has no
// such bound).
const MaxSweepPoints = 2000

// SweepPlan describes a validated sweep to the page.
type SweepPlan struct {
	Points int         `json:"points"`
	Axes   []SweepAxis `json:"axes"`
	// X is the axis on the plots' x axis (core/sweep's Plan.XAxis), -1
	// when no axis is numeric; XLabel names it.
	X      int    `json:"x"`
	XLabel string `json:"x_label"`
	// Lines are the plots' lines: the points that share every value but
	// the x axis's, in x order (core/sweep's Result.Series grouping).
	Lines []SweepLine `json:"lines"`
}

// SweepAxis is one --vary.
type SweepAxis struct {
	Path    string   `json:"path"`
	Values  []string `json:"values"`
	Numeric bool     `json:"numeric"`
}

// SweepLine is one line of the plots: its name and its points.
type SweepLine struct {
	Name   string    `json:"name"`
	Points []int     `json:"points"`
	X      []float64 `json:"x"`
}

// SweepPoint is what the page shows of one evaluated point: the sizing
// columns as the summary writes them ("" when the point lacks one).
type SweepPoint struct {
	Restored   string  `json:"restored"`
	Recomputed string  `json:"recomputed"`
	TTFTP50    string  `json:"ttft_p50"`
	TTFTP99    string  `json:"ttft_p99"`
	ElapsedMs  float64 `json:"elapsed_ms"`
	// Sets are the point's --set overrides of the sweep's config (core/sweep's
	// Plan.Overrides): the page opens the point in the run view with them.
	Sets []string `json:"sets,omitempty"`
}

// SweepCurves are the plotted lines of a finished sweep, as core/sweep's
// Result.Series gives them (the CLI's plots draw the same).
type SweepCurves struct {
	Restored   []Curve `json:"restored"`
	Recomputed []Curve `json:"recomputed"`
	TTFTP50    []Curve `json:"ttft_p50"`
	TTFTP99    []Curve `json:"ttft_p99"`
}

// Curve is one plotted line.
type Curve struct {
	Name string    `json:"name"`
	X    []float64 `json:"x"`
	Y    []float64 `json:"y"`
}
