package record

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Legend explains the one-character slot and entry states.
const Legend = `G1: . free  p private  A cached, in use  i cached, idle (eviction queue)  h held for a copy  r reserved for a load
G2: P pending store  R resident (listed in eviction order)  N pinned by a load`

// Inspect writes one pass of one rank as text: the pass, the G1 map (one
// character per slot, 64 to a row), the eviction queues, the G2 map, then
// the pass's events (kvsim inspect).
func (r *Record) Inspect(w io.Writer, rank, pass int) error {
	s, err := r.Seek(rank, pass)
	if err != nil {
		return err
	}
	in := s.Info
	kind := "pass"
	if in.Final {
		kind = "run end (changes after the last pass)"
	}
	fmt.Fprintf(w, "worker %d rank %d (%s) %s %d: start %v ms, compute %v ms, end %v ms\n",
		in.Rank.Worker, in.Rank.Rank, in.Rank.Role, kind, in.Pass, in.StartMs, in.ComputeStartMs, in.EndMs)
	for _, sc := range in.Scheduled {
		fmt.Fprintf(w, "  scheduled %s: %d tokens (%d prompt)\n", sc.Request, sc.Tokens, sc.Prefill)
	}
	counts := map[byte]int{}
	fmt.Fprintf(w, "\nG1 (%d slots)\n", len(s.G1))
	for i := 0; i < len(s.G1); i += 64 {
		var b strings.Builder
		for j := i; j < min(i+64, len(s.G1)); j++ {
			b.WriteByte(s.G1[j].State)
			counts[s.G1[j].State]++
		}
		fmt.Fprintf(w, "%6d  %s\n", i, b.String())
	}
	fmt.Fprintf(w, "        free %d  private %d  in use %d  idle %d  held %d  reserved %d\n",
		counts[SlotFree], counts[SlotPrivate], counts[SlotActive], counts[SlotIdle], counts[SlotHeld], counts[SlotReserved])
	idle := make([]Slot, 0, counts[SlotIdle])
	for _, sl := range s.G1 {
		if sl.State == SlotIdle {
			idle = append(idle, sl)
		}
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].QueuePos < idle[j].QueuePos })
	if len(idle) > 0 {
		fmt.Fprintf(w, "  next G1 victims: %s\n", r.namesOf(idle, 8))
	}
	if s.G2 != nil {
		d := r.Domain[r.RankIndex(in.Rank.Worker, in.Rank.Rank)]
		fmt.Fprintf(w, "\nG2 (%d of %d blocks, eviction order first)\n", len(s.G2), r.G2Capacity[d])
		var b strings.Builder
		for i, e := range s.G2 {
			if i > 0 && i%64 == 0 {
				b.WriteString("\n        ")
			}
			b.WriteByte(e.State)
		}
		fmt.Fprintf(w, "        %s\n", b.String())
		var first []string
		for _, e := range s.G2 {
			if e.Order >= 0 && len(first) < 8 {
				first = append(first, r.BlockName(e.Block))
			}
		}
		if len(first) > 0 {
			fmt.Fprintf(w, "  next G2 victims: %s\n", strings.Join(first, " "))
		}
	}
	fmt.Fprintf(w, "\nevents\n")
	if len(s.Events) == 0 {
		fmt.Fprintf(w, "  (none)\n")
	}
	for _, e := range s.Events {
		fmt.Fprintf(w, "  %s\n", describe(e))
	}
	fmt.Fprintf(w, "\n%s\n", Legend)
	return nil
}

func (r *Record) namesOf(slots []Slot, n int) string {
	var out []string
	for i, sl := range slots {
		if i == n {
			out = append(out, fmt.Sprintf("… (%d more)", len(slots)-n))
			break
		}
		out = append(out, r.BlockName(sl.Block))
	}
	return strings.Join(out, " ")
}

// describe renders one event as a line.
func describe(e Event) string {
	var b strings.Builder
	b.WriteString(e.Kind)
	if e.Request != "" {
		b.WriteString(" " + e.Request)
	}
	add := func(format string, a ...any) { fmt.Fprintf(&b, " "+format, a...) }
	if e.Block != "" {
		add("%s", e.Block)
	}
	if e.Slot != nil {
		add("slot %d", *e.Slot)
	}
	if e.Result != "" {
		add("→ %s", e.Result)
	}
	if e.G1Hits != nil {
		add("(G1 hit %d blocks)", *e.G1Hits)
	}
	if e.Reused != nil {
		add("reused %d (G1 %d, G2 %d), cursor %d", *e.Reused, *e.G1, *e.Host, *e.Cursor)
		if e.Readmit != nil && *e.Readmit {
			add("readmission")
		}
	}
	if e.Transfer != 0 {
		add("#%d", e.Transfer)
	}
	if len(e.Blocks) > 0 {
		if len(e.Blocks) <= 6 {
			add("[%s]", strings.Join(e.Blocks, " "))
		} else {
			add("[%s … %s] (%d blocks)", e.Blocks[0], e.Blocks[len(e.Blocks)-1], len(e.Blocks))
		}
	}
	if e.AtMs != nil {
		add("at %v", *e.AtMs)
	}
	if e.DeadlineMs != nil {
		add("until %v", *e.DeadlineMs)
	}
	if e.Before != nil {
		add("%d → %d", *e.Before, *e.After)
	}
	if e.UntilMs != nil {
		add("until %v", *e.UntilMs)
	}
	if e.FenceFrom != nil {
		add("fence %v → %v", *e.FenceFrom, *e.FenceTo)
	}
	if e.AtFinish != nil && *e.AtFinish {
		add("(at finish)")
	}
	if e.Needed != nil {
		add("needs %d blocks, %d available (in use %d, reserved %d, held %d, headroom %d)",
			*e.Needed, *e.Available, *e.InUse, *e.Reserved, *e.Held, *e.Headroom)
	}
	if e.From != nil {
		add("blocks %d to %d: %d missing, room %d", *e.From, *e.To, *e.Missing, *e.Room)
	}
	if e.Handoff != nil && *e.Handoff {
		add("(P/D handoff)")
	}
	if e.Reason != "" {
		add("(%s)", e.Reason)
	}
	return b.String()
}
