package tui

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/simlab/simlab/traces"
)

// signatureAttrs are the attributes that tell spans of one name apart in a
// comparison: which prologue a step took, why a runs.get was made, what an
// events.create wrote and how it was answered, how a delivery ended.
var signatureAttrs = []string{
	traces.KeyDispatchPrologue, traces.KeyRunsGetReason, traces.KeyEventType,
	traces.KeyEventResult, traces.KeyDeliveryDisposition, traces.KeyDispatchSite,
}

// spanSignature groups a span with its like: its name (step names folded
// together) and the values of signatureAttrs it has.
func spanSignature(s *traces.Span) string {
	name := s.Name
	if strings.HasPrefix(name, traces.StepSpanPrefix) {
		name = traces.StepSpanPrefix
	}
	parts := []string{name}
	for _, k := range signatureAttrs {
		if v, ok := s.Attr(k); ok {
			parts = append(parts, k[strings.LastIndex(k, ".")+1:]+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

func signatureCounts(r *Run) map[string]int {
	out := map[string]int{}
	for i := range r.Spans {
		out[spanSignature(&r.Spans[i])]++
	}
	return out
}

// compareView shows two runs side by side (typically one seed with the
// legacy prologue and with the fetch-free one): headline figures, the knobs
// that differ, then the kinds of span whose counts differ. Its columns are
// fitted to the screen when drawn, so both runs are always visible; text
// that does not fit is cut at its end, never at its start.
type compareView struct {
	*tview.Table
	a, b  *Run
	rows  []compareRow
	width int
}

// compareRow is one line: a label and the two runs' values.
type compareRow struct {
	label, x, y string
	section     bool
}

func newCompareView(a, b *Run) *compareView {
	v := &compareView{Table: tview.NewTable(), a: a, b: b}
	v.SetSelectable(true, false).SetFixed(1, 0).SetSelectedStyle(styleSelected)
	v.rows = compareRows(a, b)
	v.build()
	v.Select(1, 0)
	return v
}

func (v *compareView) kind() ViewKind { return ViewCompare }

func (v *compareView) crumb() string { return "compare #" + itoa(v.a.No) + " ↔ #" + itoa(v.b.No) }

// knobsFull is a run's --set assignments as typed, or — for none.
func knobsFull(r *Run) string {
	if len(r.cfg.Sets) == 0 {
		return "—"
	}
	return strings.Join(r.cfg.Sets, " ")
}

// knobValue is the value of scenario field key in r: its last --set, else
// the scenario's own value when the knobs form knows the field, else —.
func knobValue(r *Run, key string) string {
	for i := len(r.cfg.Sets) - 1; i >= 0; i-- {
		if k, val, _ := strings.Cut(r.cfg.Sets[i], "="); k == key {
			return val
		}
	}
	if r.cfg.Scenario != "" {
		for _, k := range knobs {
			if k.key != key {
				continue
			}
			if sc, err := r.cfg.scenario(); err == nil {
				return k.get(&sc)
			}
		}
	}
	return "—"
}

// compareRows lists what the view shows of a and b.
func compareRows(a, b *Run) []compareRow {
	var rows []compareRow
	add := func(label string, f func(r *Run) string) {
		rows = append(rows, compareRow{label: label, x: f(a), y: f(b)})
	}
	add("run", func(r *Run) string { return r.RunID + " seed " + seedText(r) })
	add("scenario", func(r *Run) string { return r.Scenario })
	add("variants", variantsText)
	add("knobs (--set)", knobsFull)
	// Each knob set in either run, with both values, so the one that
	// differs is named with what it was on each side.
	var keys []string
	for _, r := range []*Run{a, b} {
		for _, kv := range r.cfg.Sets {
			if k, _, _ := strings.Cut(kv, "="); !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		add("  "+k, func(r *Run) string { return knobValue(r, k) })
	}
	add("status", func(r *Run) string { return r.Status })
	add("properties", verdictText)
	add("TTLS", ttlsText)
	add("run duration", func(r *Run) string { return fmtDur(r.Duration) })
	add("prologue", func(r *Run) string { return r.Prologue })
	add("prologue runs.get", func(r *Run) string { return itoa(r.PrologueFetches) })
	add("lazy runs.get", func(r *Run) string { return itoa(r.LazyFetches) })
	add("deliveries", func(r *Run) string { return itoa(r.Deliveries) })
	add("redeliveries", func(r *Run) string { return itoa(r.Redeliveries) })
	add("spans", func(r *Run) string { return itoa(len(r.Spans)) })
	ca, cb := signatureCounts(a), signatureCounts(b)
	kinds := slices.Sorted(maps.Keys(ca))
	for k := range cb {
		if _, ok := ca[k]; !ok {
			kinds = append(kinds, k)
		}
	}
	slices.SortFunc(kinds, func(x, y string) int { return cmp.Compare(x, y) })
	same := 0
	rows = append(rows, compareRow{label: "SPANS THAT DIFFER (kind: count)", section: true})
	for _, k := range kinds {
		if ca[k] == cb[k] {
			same++
			continue
		}
		rows = append(rows, compareRow{label: k, x: itoa(ca[k]), y: itoa(cb[k])})
	}
	rows = append(rows, compareRow{label: itoa(same) + " other kinds: same count", section: true})
	return rows
}

// widths fits the label and the two value columns into w cells: the values
// whole if they can be, the label with what is left (at least a third).
func (v *compareView) widths(w int) (label, x, y int) {
	x, y = width(v.title(v.a)), width(v.title(v.b))
	for _, r := range v.rows {
		label = max(label, width(r.label))
		x, y = max(x, width(r.x)), max(y, width(r.y))
	}
	if w <= 0 {
		return label, x, y
	}
	// 1 for the ≠ column and 3 for the gaps between the 4 columns.
	avail := w - 4
	minLabel := min(label, avail/3)
	for x+y > avail-minLabel {
		if x >= y {
			x--
		} else {
			y--
		}
	}
	return min(label, avail-x-y), x, y
}

func (v *compareView) title(r *Run) string { return "#" + itoa(r.No) }

// build writes the cells, each text cut at its end to its column's width.
func (v *compareView) build() {
	lw, xw, yw := v.widths(v.width)
	v.Clear()
	v.SetCell(0, 0, tview.NewTableCell("").SetSelectable(false))
	v.SetCell(0, 1, tview.NewTableCell(fitLeft("≠ marks a difference", lw)).SetStyle(styleDim).SetSelectable(false))
	v.SetCell(0, 2, tview.NewTableCell(tview.Escape(fitLeft(v.title(v.a), xw))).SetStyle(styleHeader).SetAlign(tview.AlignRight).SetSelectable(false))
	v.SetCell(0, 3, tview.NewTableCell(tview.Escape(fitLeft(v.title(v.b), yw))).SetStyle(styleHeader).SetAlign(tview.AlignRight).SetSelectable(false))
	for i, r := range v.rows {
		n := i + 1
		st := styleBase
		mark := ""
		switch {
		case r.section:
			st = styleHeader
		case r.x != r.y:
			st, mark = styleBase.Foreground(tcell.ColorOrange), "≠"
		}
		// The mark leads the row, where no width can push it off.
		v.SetCell(n, 0, tview.NewTableCell(mark).SetStyle(st).SetSelectable(!r.section))
		v.SetCell(n, 1, tview.NewTableCell(tview.Escape(fitLeft(r.label, lw))).SetStyle(st).SetSelectable(!r.section))
		v.SetCell(n, 2, tview.NewTableCell(tview.Escape(fitLeft(r.x, xw))).SetStyle(st).SetAlign(tview.AlignRight).SetSelectable(!r.section))
		v.SetCell(n, 3, tview.NewTableCell(tview.Escape(fitLeft(r.y, yw))).SetStyle(st).SetAlign(tview.AlignRight).SetSelectable(!r.section))
	}
}

func (v *compareView) Draw(screen tcell.Screen) {
	if _, _, w, _ := v.GetInnerRect(); w != v.width {
		row, _ := v.GetSelection()
		v.width = w
		v.build()
		v.Select(row, 0)
	}
	v.Table.Draw(screen)
}

func (v *compareView) move(delta int) { moveTable(v.Table, delta) }
