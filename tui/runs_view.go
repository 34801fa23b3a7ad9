package tui

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/rivo/tview"

	"github.com/simlab/simlab/traces"
)

// runColumn is one column of the runs view: its title, its text, and how
// it sorts.
type runColumn struct {
	title string
	value func(r *Run) string
	cmp   func(a, b *Run) int
	right bool // numbers align right
}

func variantsText(r *Run) string {
	if len(r.Variants) == 0 {
		return "—"
	}
	return strings.Join(r.Variants, ",")
}

func verdictText(r *Run) string {
	switch {
	case !r.Checked:
		return "n/a"
	case len(r.Violations) == 0:
		return "✓"
	}
	return "✗ " + strconv.Itoa(len(r.Violations))
}

func ttlsText(r *Run) string {
	if !r.HasTTLS {
		return "—"
	}
	return fmtDur(r.TTLS)
}

func seedText(r *Run) string {
	if !r.HasSeed {
		return "—"
	}
	return strconv.FormatUint(r.Seed, 10)
}

func itoa(n int) string { return strconv.Itoa(n) }

// b2i orders false before true.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runColumns are the runs view's columns, one row per workflow run (one
// trace), never one per service.
var runColumns = []runColumn{
	{"#", func(r *Run) string { return itoa(r.No) }, func(a, b *Run) int { return cmp.Compare(a.No, b.No) }, true},
	{"SEED", seedText, func(a, b *Run) int { return cmp.Compare(a.Seed, b.Seed) }, true},
	{"SCENARIO", func(r *Run) string { return r.Scenario }, func(a, b *Run) int { return cmp.Compare(a.Scenario, b.Scenario) }, false},
	{"VARIANTS", variantsText, func(a, b *Run) int { return cmp.Compare(variantsText(a), variantsText(b)) }, false},
	{"RUN", func(r *Run) string { return r.RunID }, func(a, b *Run) int { return cmp.Compare(a.RunID, b.RunID) }, false},
	{"STATUS", func(r *Run) string { return r.Status }, func(a, b *Run) int { return cmp.Compare(a.Status, b.Status) }, false},
	{"PROPS", verdictText, func(a, b *Run) int {
		return cmp.Or(cmp.Compare(b2i(a.Checked), b2i(b.Checked)), cmp.Compare(len(a.Violations), len(b.Violations)))
	}, false},
	{"TTLS", ttlsText, func(a, b *Run) int {
		return cmp.Or(cmp.Compare(b2i(a.HasTTLS), b2i(b.HasTTLS)), cmp.Compare(a.TTLS, b.TTLS))
	}, true},
	{"PROLOGUE", func(r *Run) string { return r.Prologue }, func(a, b *Run) int { return cmp.Compare(a.Prologue, b.Prologue) }, false},
	{"PRE-GETS", func(r *Run) string { return itoa(r.PrologueFetches) }, func(a, b *Run) int {
		return cmp.Compare(a.PrologueFetches, b.PrologueFetches)
	}, true},
	{"LAZY", func(r *Run) string { return itoa(r.LazyFetches) }, func(a, b *Run) int { return cmp.Compare(a.LazyFetches, b.LazyFetches) }, true},
	{"DELIV", func(r *Run) string { return itoa(r.Deliveries) }, func(a, b *Run) int { return cmp.Compare(a.Deliveries, b.Deliveries) }, true},
	{"REDELIV", func(r *Run) string { return itoa(r.Redeliveries) }, func(a, b *Run) int {
		return cmp.Compare(a.Redeliveries, b.Redeliveries)
	}, true},
	{"AFTER-END", func(r *Run) string { return itoa(r.AfterEnd) }, func(a, b *Run) int { return cmp.Compare(a.AfterEnd, b.AfterEnd) }, true},
}

// runsView is the list of runs, the root of the breadcrumb.
type runsView struct {
	*tview.Table
	sess    *session
	rows    []*Run
	sortCol int
	desc    bool
	filter  filter
	marked  *Run
}

func newRunsView(sess *session) *runsView {
	v := &runsView{Table: tview.NewTable(), sess: sess}
	v.SetSelectable(true, false).SetFixed(1, 0)
	v.SetSelectedStyle(styleSelected)
	v.refresh()
	return v
}

func (v *runsView) kind() ViewKind { return ViewRuns }

func (v *runsView) crumb() string {
	s := "runs (" + itoa(len(v.rows))
	if len(v.rows) != len(v.sess.runs) {
		s += " of " + itoa(len(v.sess.runs))
	}
	s += ")"
	if v.filter.active() {
		s += " /" + v.filter.String()
	}
	return s
}

// selected is the run under the cursor, or nil for an empty list.
func (v *runsView) selected() *Run {
	row, _ := v.GetSelection()
	if row < 1 || row > len(v.rows) {
		return nil
	}
	return v.rows[row-1]
}

// fields are a run's columns as name=value pairs for the filter, plus the
// root span's attributes, so /workflow.run.status=failed works as on spans.
func runFields(r *Run) []traces.Attr {
	out := make([]traces.Attr, 0, len(runColumns)+16)
	for _, c := range runColumns {
		out = append(out, traces.Attr{Key: strings.ToLower(c.title), Value: c.value(r)})
	}
	return append(out, r.Spans[r.root].Attrs...)
}

// refresh rebuilds the rows from the session: filter, sort, draw, keeping
// the selection on the same run when it is still shown.
func (v *runsView) refresh() {
	keep := v.selected()
	v.rows = v.rows[:0]
	for _, r := range v.sess.runs {
		if v.filter.matchFields(runFields(r)) {
			v.rows = append(v.rows, r)
		}
	}
	col := runColumns[v.sortCol]
	slices.SortStableFunc(v.rows, func(a, b *Run) int {
		c := col.cmp(a, b)
		if v.desc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.No, b.No))
	})
	v.Clear()
	for c, rc := range runColumns {
		title := rc.title
		if c == v.sortCol {
			title += map[bool]string{false: "▲", true: "▼"}[v.desc]
		}
		v.SetCell(0, c, tview.NewTableCell(title).SetStyle(styleHeader).SetSelectable(false).
			SetAlign(alignOf(rc)).SetExpansion(expansionOf(rc)))
	}
	for i, r := range v.rows {
		for c, rc := range runColumns {
			text := rc.value(r)
			if c == 0 && r == v.marked {
				text = "*" + text
			}
			style := styleBase
			switch {
			case rc.title == "PROPS" && strings.HasPrefix(text, "✗"):
				style = styleError
			case rc.title == "PROPS" && text == "✓":
				style = styleOK
			case rc.title == "STATUS" && (text == "failed" || text == "cancelled"):
				style = styleError
			}
			cell := tview.NewTableCell(tview.Escape(text)).SetStyle(style).SetAlign(alignOf(rc)).
				SetMaxWidth(maxWidthOf(rc)).SetExpansion(expansionOf(rc))
			v.SetCell(i+1, c, cell.SetReference(r))
		}
	}
	row := 1
	for i, r := range v.rows {
		if r == keep {
			row = i + 1
		}
	}
	if len(v.rows) == 0 {
		row = 0
	}
	v.Select(row, 0)
}

func alignOf(c runColumn) int {
	if c.right {
		return tview.AlignRight
	}
	return tview.AlignLeft
}

func maxWidthOf(c runColumn) int {
	switch c.title {
	case "VARIANTS":
		return 24
	case "SCENARIO":
		return 16
	}
	return 0
}

// expansionOf lets the variants column take the slack, so the numbers stay
// together on the right.
func expansionOf(c runColumn) int {
	if c.title == "VARIANTS" {
		return 1
	}
	return 0
}

// cycleSort moves the sort to the next column.
func (v *runsView) cycleSort() string {
	v.sortCol = (v.sortCol + 1) % len(runColumns)
	v.refresh()
	return runColumns[v.sortCol].title
}

func (v *runsView) reverse() {
	v.desc = !v.desc
	v.refresh()
}

func (v *runsView) toggleMark() {
	r := v.selected()
	if r == nil {
		return
	}
	if v.marked == r {
		v.marked = nil
	} else {
		v.marked = r
	}
	v.refresh()
}

// selectRun moves the cursor to r if it is shown.
func (v *runsView) selectRun(r *Run) bool {
	for i, x := range v.rows {
		if x == r {
			v.Select(i+1, 0)
			return true
		}
	}
	return false
}

func (v *runsView) move(delta int) { moveTable(v.Table, delta) }

func (v *runsView) setFilter(f filter) { v.filter = f; v.refresh() }

func (v *runsView) currentFilter() filter { return v.filter }
