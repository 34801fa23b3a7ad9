package tui

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"
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

// knobsText is a run's --set assignments, short: the last part of each key
// (workflow.max_inline=1 → max_inline=1), so that runs re-simulated with
// new knobs are told apart in the runs view; the compare view names them
// in full.
func knobsText(r *Run) string {
	if len(r.cfg.Sets) == 0 {
		return "—"
	}
	parts := make([]string, len(r.cfg.Sets))
	for i, kv := range r.cfg.Sets {
		k, v, _ := strings.Cut(kv, "=")
		parts[i] = k[strings.LastIndex(k, ".")+1:] + "=" + v
	}
	return strings.Join(parts, ",")
}

func verdictText(r *Run) string {
	switch n, known := r.violationCount(); {
	case !known:
		return "n/a"
	case n == 0:
		return "✓"
	default:
		return "✗ " + strconv.Itoa(n)
	}
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
	{"KNOBS", knobsText, func(a, b *Run) int { return cmp.Compare(knobsText(a), knobsText(b)) }, false},
	{"RUN", func(r *Run) string { return r.RunID }, func(a, b *Run) int { return cmp.Compare(a.RunID, b.RunID) }, false},
	{"STATUS", func(r *Run) string { return r.Status }, func(a, b *Run) int { return cmp.Compare(a.Status, b.Status) }, false},
	{"PROPS", verdictText, func(a, b *Run) int {
		na, ka := a.violationCount()
		nb, kb := b.violationCount()
		return cmp.Or(cmp.Compare(b2i(ka), b2i(kb)), cmp.Compare(na, nb))
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
	// shown are the columns on screen: the # column, then as many as fit
	// from colOffset on. Columns are shown whole or not at all, so no
	// title or value is ever cut by the screen's edge; h/l scroll.
	shown     []int
	colOffset int
	width     int
	// natural is each column's width with every row whole, measured when
	// the rows change rather than on every draw of a long list.
	natural []int
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
	return append(out, r.Spans[r.tree.Root].Attrs...)
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
	v.measure()
	v.build()
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

// title is column c's heading, with the sort mark on the sort column.
func (v *runsView) title(c int) string {
	t := runColumns[c].title
	if c == v.sortCol {
		t += map[bool]string{false: "▲", true: "▼"}[v.desc]
	}
	return t
}

// cellText is column c's text for r, cut at the end to the column's
// maximum width.
func (v *runsView) cellText(c int, r *Run) string {
	rc := runColumns[c]
	text := rc.value(r)
	if c == 0 && r == v.marked {
		text = "*" + text
	}
	if mw := maxWidthOf(rc); mw > 0 {
		text = fitLeft(text, mw)
	}
	return text
}

// fitColumns chooses the columns shown at width w: the # column, then
// whole columns from colOffset on while they fit.
func (v *runsView) fitColumns(w int) []int {
	natural := func(c int) int { return v.natural[c] }
	if w <= 0 {
		// Not drawn yet: every column, as the filter and tests see them.
		all := make([]int, len(runColumns))
		for c := range all {
			all[c] = c
		}
		return all
	}
	shown := []int{0}
	used := natural(0)
	for c := 1 + v.colOffset; c < len(runColumns); c++ {
		n := natural(c)
		// The last two cells stay free for the arrows (see Draw).
		if used+1+n > w-2 {
			break
		}
		shown = append(shown, c)
		used += 1 + n
	}
	return shown
}

// measure computes the columns' natural widths.
func (v *runsView) measure() {
	v.natural = make([]int, len(runColumns))
	for c := range runColumns {
		n := width(v.title(c))
		for _, r := range v.rows {
			n = max(n, width(v.cellText(c, r)))
		}
		v.natural[c] = n
	}
}

// build writes the cells of the shown columns.
func (v *runsView) build() {
	v.shown = v.fitColumns(v.width)
	v.Clear()
	for col, c := range v.shown {
		rc := runColumns[c]
		v.SetCell(0, col, tview.NewTableCell(v.title(c)).SetStyle(styleHeader).SetSelectable(false).
			SetAlign(alignOf(rc)).SetExpansion(expansionOf(rc)))
	}
	for i, r := range v.rows {
		for col, c := range v.shown {
			rc := runColumns[c]
			text := v.cellText(c, r)
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
				SetExpansion(expansionOf(rc))
			v.SetCell(i+1, col, cell.SetReference(r))
		}
	}
}

func (v *runsView) Draw(screen tcell.Screen) {
	x, y, w, h := v.GetInnerRect()
	if w != v.width || !slices.Equal(v.shown, v.fitColumns(w)) {
		row, _ := v.GetSelection()
		v.width = w
		v.build()
		v.Select(row, 0)
	}
	// The table gets all but the last two cells, which say whether
	// columns wait off screen, and which way.
	rx, ry, rw, rh := v.GetRect()
	v.SetRect(rx, ry, max(0, rw-2), rh)
	v.Table.Draw(screen)
	v.SetRect(rx, ry, rw, rh)
	for row := range rh {
		fill(screen, rx+rw-2, ry+row, 2, ' ', styleBase)
	}
	if v.colOffset > 0 {
		put(screen, x+w-2, y, 1, "←", styleKey)
	}
	if last := v.shown[len(v.shown)-1]; last < len(runColumns)-1 {
		put(screen, x+w-1, y, 1, "→", styleKey)
	}
	if len(v.rows) == 0 && h > 1 {
		put(screen, x, y+1, w, fitLeft("no run matches /"+v.filter.String()+" · esc clears the filter", w), styleDim)
	}
}

// scroll moves the first scrolling column by delta: right only while a
// column still waits off screen, left back to the first.
func (v *runsView) scroll(delta int) {
	switch {
	case delta > 0 && (v.width <= 0 && v.colOffset < len(runColumns)-2 || v.shown[len(v.shown)-1] < len(runColumns)-1):
		v.colOffset++
	case delta < 0 && v.colOffset > 0:
		v.colOffset--
	default:
		return
	}
	row, _ := v.GetSelection()
	v.build()
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
	case "KNOBS":
		return 20
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
