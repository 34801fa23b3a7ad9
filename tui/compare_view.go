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
	"workflow.step.dispatch_prologue", "simlab.runs_get.reason", "simlab.event.type",
	"simlab.event.result", "simlab.delivery.disposition", "simlab.dispatch.site",
}

// spanSignature groups a span with its like: its name (step names folded
// together) and the values of signatureAttrs it has.
func spanSignature(s *traces.Span) string {
	name := s.Name
	if strings.HasPrefix(name, "step.execute") {
		name = "step.execute"
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
// legacy prologue and with the fetch-free one): headline figures, then the
// kinds of span whose counts differ.
type compareView struct {
	*tview.Table
	a, b *Run
}

func newCompareView(a, b *Run) *compareView {
	v := &compareView{Table: tview.NewTable(), a: a, b: b}
	v.SetSelectable(true, false).SetFixed(1, 0).SetSelectedStyle(styleSelected)
	v.build()
	return v
}

func (v *compareView) kind() ViewKind { return ViewCompare }

func (v *compareView) crumb() string { return "compare #" + itoa(v.a.No) + " ↔ #" + itoa(v.b.No) }

func (v *compareView) row(label, x, y string, section bool) {
	n := v.GetRowCount()
	st := styleBase
	mark := ""
	switch {
	case section:
		st = styleHeader
	case x != y:
		st, mark = styleBase.Foreground(tcell.ColorOrange), "≠"
	}
	// The mark leads the row: wide labels may push the last column off a
	// narrow screen, never the first.
	v.SetCell(n, 0, tview.NewTableCell(mark).SetStyle(st).SetSelectable(!section))
	v.SetCell(n, 1, tview.NewTableCell(tview.Escape(label)).SetStyle(st).SetSelectable(!section))
	v.SetCell(n, 2, tview.NewTableCell(tview.Escape(x)).SetStyle(st).SetAlign(tview.AlignRight).SetSelectable(!section))
	v.SetCell(n, 3, tview.NewTableCell(tview.Escape(y)).SetStyle(st).SetAlign(tview.AlignRight).SetSelectable(!section))
}

func (v *compareView) build() {
	a, b := v.a, v.b
	v.SetCell(0, 0, tview.NewTableCell("").SetSelectable(false))
	v.SetCell(0, 1, tview.NewTableCell("≠ marks a difference").SetStyle(styleDim).SetSelectable(false))
	v.SetCell(0, 2, tview.NewTableCell(tview.Escape(a.Label())).SetStyle(styleHeader).SetAlign(tview.AlignRight).SetSelectable(false))
	v.SetCell(0, 3, tview.NewTableCell(tview.Escape(b.Label())).SetStyle(styleHeader).SetAlign(tview.AlignRight).SetSelectable(false))
	figures := []struct {
		label string
		f     func(r *Run) string
	}{
		{"scenario", func(r *Run) string { return r.Scenario }},
		{"variants", variantsText},
		{"status", func(r *Run) string { return r.Status }},
		{"properties", verdictText},
		{"TTLS", ttlsText},
		{"run duration", func(r *Run) string { return fmtDur(r.Duration) }},
		{"prologue", func(r *Run) string { return r.Prologue }},
		{"prologue runs.get", func(r *Run) string { return itoa(r.PrologueFetches) }},
		{"lazy runs.get", func(r *Run) string { return itoa(r.LazyFetches) }},
		{"deliveries", func(r *Run) string { return itoa(r.Deliveries) }},
		{"redeliveries", func(r *Run) string { return itoa(r.Redeliveries) }},
		{"spans", func(r *Run) string { return itoa(len(r.Spans)) }},
	}
	for _, f := range figures {
		v.row(f.label, f.f(a), f.f(b), false)
	}
	ca, cb := signatureCounts(a), signatureCounts(b)
	keys := slices.Sorted(maps.Keys(ca))
	for k := range cb {
		if _, ok := ca[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(x, y string) int { return cmp.Compare(x, y) })
	same := 0
	v.row("SPANS THAT DIFFER (name and key attributes: count)", "", "", true)
	for _, k := range keys {
		if ca[k] == cb[k] {
			same++
			continue
		}
		v.row(k, itoa(ca[k]), itoa(cb[k]), false)
	}
	v.row(itoa(same)+" other kinds of span occur equally often in both", "", "", true)
	v.Select(1, 0)
}

func (v *compareView) move(delta int) { moveTable(v.Table, delta) }
