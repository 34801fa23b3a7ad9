package tui

import (
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/simlab/simlab/traces"
)

// timelineView is one run's spans as a waterfall on virtual time: a tree
// whose nodes fold, bars scaled to the run's duration, start times as
// offsets from the run's start, marks for faults, redeliveries and errors,
// the deployment/version that handled each delivery, and a time cursor
// that steps through the run's log with the state panel below.
type timelineView struct {
	*tview.Box
	run    *Run
	tm     *timeModel
	panel  *statePanel
	folded map[int]bool
	rows   []int // span indices shown, in order
	sel    int   // index into rows
	offset int   // first row drawn
	filter filter
}

func newTimelineView(r *Run) *timelineView {
	tm := newTimeModel(r)
	v := &timelineView{Box: tview.NewBox(), run: r, tm: tm, panel: newStatePanel(tm), folded: map[int]bool{}}
	v.rebuild()
	return v
}

func (v *timelineView) kind() ViewKind { return ViewTimeline }

func (v *timelineView) crumb() string {
	s := v.run.Label() + " timeline"
	if v.filter.active() {
		s += " /" + v.filter.String()
	}
	return s
}

// rebuild recomputes the rows shown: the unfolded tree, or with a filter
// the matching spans in time order, keeping the selected span if it stays.
func (v *timelineView) rebuild() {
	keep := -1
	if v.sel < len(v.rows) {
		keep = v.rows[v.sel]
	}
	v.rows = v.rows[:0]
	if v.filter.active() {
		// The matches in the tree's order (folds aside): a parent above
		// its children, whichever of them match.
		var walk func(i int)
		walk = func(i int) {
			if v.filter.matchSpan(&v.run.Spans[i]) {
				v.rows = append(v.rows, i)
			}
			for _, c := range v.run.tree.Children[i] {
				walk(c)
			}
		}
		walk(v.run.tree.Root)
	} else {
		var walk func(i int)
		walk = func(i int) {
			v.rows = append(v.rows, i)
			if v.folded[i] {
				return
			}
			for _, c := range v.run.tree.Children[i] {
				walk(c)
			}
		}
		walk(v.run.tree.Root)
	}
	v.sel = 0
	for i, s := range v.rows {
		if s == keep {
			v.sel = i
		}
	}
}

// selectedSpan is the span under the cursor.
func (v *timelineView) selectedSpan() (int, bool) {
	if v.sel >= len(v.rows) {
		return 0, false
	}
	return v.rows[v.sel], true
}

func (v *timelineView) move(delta int) {
	if len(v.rows) == 0 {
		return
	}
	v.sel = min(max(v.sel+delta, 0), len(v.rows)-1)
}

func (v *timelineView) setFilter(f filter) {
	v.filter = f
	v.rebuild()
	if f.active() {
		// With a filter the first match is where the eye goes: Enter opens it.
		v.sel, v.offset = 0, 0
	}
}

func (v *timelineView) currentFilter() filter { return v.filter }

// toggleFold folds or unfolds the selected span's children.
func (v *timelineView) toggleFold() bool {
	i, ok := v.selectedSpan()
	if !ok || len(v.run.tree.Children[i]) == 0 || v.filter.active() {
		return false
	}
	v.folded[i] = !v.folded[i]
	v.rebuild()
	return true
}

// step moves the time cursor by delta events of the run's log.
func (v *timelineView) step(delta int) {
	if n := len(v.tm.moments); n > 0 {
		v.panel.cursor = min(max(v.panel.cursor+delta, 0), n-1)
	}
}

// seek puts the time cursor on the last event at or before offset t.
func (v *timelineView) seek(t time.Duration) {
	v.panel.cursor = 0
	for i, m := range v.tm.moments {
		if m.At <= t {
			v.panel.cursor = i
		}
	}
}

// cursorAt is the time cursor's offset, or -1 without events.
func (v *timelineView) cursorAt() time.Duration {
	if len(v.tm.moments) == 0 {
		return -1
	}
	return v.tm.moments[v.panel.cursor].At
}

// Column widths: the name takes about a third, the bars what is left.
type timelineLayout struct {
	name, dep, marks, start, dur int
	barX, barW                   int
}

func layoutTimeline(w int) timelineLayout {
	l := timelineLayout{dep: 11, marks: 9, start: 9, dur: 8}
	l.name = min(max(w*32/100, 24), 44)
	l.barX = l.name + 1 + l.dep + 1 + l.marks + 1 + l.start + 1 + l.dur + 2
	l.barW = max(w-l.barX-1, 4)
	return l
}

func (v *timelineView) Draw(screen tcell.Screen) {
	v.DrawForSubclass(screen, v)
	x, y, w, h := v.GetInnerRect()
	listH := h - 1 - statePanelHeight
	if listH < 1 {
		return
	}
	l := layoutTimeline(w)
	total := max(v.run.Duration, time.Nanosecond)
	col := func(d time.Duration) int {
		c := int(float64(d) / float64(total) * float64(l.barW))
		return min(max(c, 0), l.barW-1)
	}
	cursor := -1
	if at := v.cursorAt(); at >= 0 {
		cursor = col(at)
	}

	// Column titles and the time axis.
	hx := x
	for _, c := range []struct {
		t string
		w int
	}{{"SPAN", l.name}, {"DEPLOY/VER", l.dep}, {"MARKS", l.marks}, {"START", l.start}, {"DUR", l.dur}} {
		put(screen, hx, y, c.w, c.t, styleHeader)
		hx += c.w + 1
	}
	end := fmtOffset(total)
	put(screen, x+l.barX, y, l.barW, "+0", styleHeader)
	put(screen, x+l.barX+l.barW-width(end), y, width(end), end, styleHeader)
	if cursor >= 0 {
		screen.SetContent(x+l.barX+cursor, y, '▼', nil, styleCursor)
	}

	// Keep the selection in view.
	if v.sel < v.offset {
		v.offset = v.sel
	}
	if v.sel >= v.offset+listH {
		v.offset = v.sel - listH + 1
	}
	v.offset = max(0, min(v.offset, len(v.rows)-listH))
	for row := 0; row < listH; row++ {
		ry := y + 1 + row
		k := v.offset + row
		if k >= len(v.rows) {
			if cursor >= 0 {
				screen.SetContent(x+l.barX+cursor, ry, '│', nil, styleCursor)
			}
			continue
		}
		v.drawRow(screen, x, ry, w, l, v.rows[k], k == v.sel, col, cursor)
	}
	if len(v.rows) == 0 && v.filter.active() {
		put(screen, x, y+1, w, fitLeft("no span matches /"+v.filter.String()+" · esc clears the filter", w), styleDim)
	}
	v.panel.SetRect(x, y+1+listH, w, statePanelHeight)
	v.panel.Draw(screen)
}

func (v *timelineView) drawRow(screen tcell.Screen, x, y, w int, l timelineLayout, i int, selected bool,
	col func(time.Duration) int, cursor int) {
	s := &v.run.Spans[i]
	base := styleBase
	if s.StatusCode == "error" {
		base = styleError
	}
	if selected {
		base = base.Reverse(true)
		fill(screen, x, y, w, ' ', base)
	}
	indent := strings.Repeat(" ", 2*v.run.tree.Depth[i])
	marker := "  "
	if len(v.run.tree.Children[i]) > 0 && !v.filter.active() {
		marker = "▾ "
		if v.folded[i] {
			marker = "▸ "
		}
	}
	cx := x
	cx += put(screen, cx, y, l.name, fit(indent+marker+fitLabel(spanLabel(s), l.name-width(indent+marker)), l.name), base) + 1
	cx += put(screen, cx, y, l.dep, fit(deploymentTag(v.run, i), l.dep), base) + 1
	cx += put(screen, cx, y, l.marks, fit(spanMarks(s), l.marks), base.Foreground(tcell.ColorOrange)) + 1
	start, dur := v.run.offset(s.Start), s.End.Sub(s.Start)
	cx += put(screen, cx, y, l.start, fmtRight(fmtOffset(start), l.start), base) + 1
	put(screen, cx, y, l.dur, fmtRight(fmtDur(dur), l.dur), base)

	bx := x + l.barX
	a, b := col(start), col(v.run.offset(s.End))
	bar := barStyle(s)
	for c := 0; c < l.barW; c++ {
		r, st := ' ', styleBase
		switch {
		case dur == 0 && c == a:
			r, st = '▪', bar
		case dur > 0 && c >= a && c <= b:
			r, st = '█', bar
		}
		if c == cursor {
			st = st.Foreground(tcell.ColorYellow)
			if r == ' ' {
				r = '│'
			}
		}
		screen.SetContent(bx+c, y, r, nil, st)
	}
}

func fmtRight(s string, w int) string {
	if width(s) >= w {
		return fitLeft(s, w)
	}
	return strings.Repeat(" ", w-width(s)) + s
}

// barStyle colours a bar by what the span is; an error is red whatever it is.
func barStyle(s *traces.Span) tcell.Style {
	c := tcell.ColorGray
	switch {
	case s.StatusCode == "error":
		c = tcell.ColorRed
	case strings.HasPrefix(s.Name, traces.StepSpanPrefix):
		c = tcell.ColorGreen
	case s.Name == traces.ExecuteSpanName:
		c = tcell.ColorAqua
	case s.Name == traces.PublishSpanName:
		c = tcell.ColorFuchsia
	case s.Name == traces.RunSpanName:
		c = tcell.ColorWhite
	}
	return styleBase.Foreground(c)
}

// deploymentTag names the deployment and version that handled a span where
// it matters for version skew: the consumer of each delivery, the producer
// of each publish, the run's pinned deployment on the root.
func deploymentTag(r *Run, i int) string {
	s := &r.Spans[i]
	dep, _ := s.ResourceAttr(traces.KeyDeploymentID)
	ver, _ := s.ResourceAttr(traces.KeyServiceVersion)
	switch {
	case s.Name == traces.ExecuteSpanName:
		if d, ok := s.Attr(traces.KeyConsumerDeploymentID); ok {
			dep = d
		}
		if v, ok := s.Attr(traces.KeyConsumerVersion); ok {
			ver = v
		}
	case s.Name == traces.PublishSpanName:
		if v, ok := s.Attr(traces.KeyProducerVersion); ok {
			ver = v
		}
	case i == r.tree.Root:
		d, _ := s.Attr(traces.KeyDeploymentID)
		return d
	case strings.HasPrefix(s.Name, traces.StepSpanPrefix):
	default:
		return ""
	}
	if dep == "" {
		return ver
	}
	return dep + "/" + ver
}

// spanMarks are the short marks of the MARKS column, a space apart (↻2 ctx,
// not ↻2ctx); the help lists them.
func spanMarks(s *traces.Span) string {
	var marks []string
	if s.StatusCode == "error" {
		marks = append(marks, "✗")
	}
	for _, e := range s.Events {
		if e.Name == traces.FaultSpanName {
			kind, _ := e.Attr(traces.KeyFaultKind)
			marks = append(marks, "!"+kind)
			break
		}
	}
	if s.Name == traces.ExecuteSpanName {
		if a, _ := s.Attr(traces.KeyDeliveryAttempt); a != "" && a != "1" {
			marks = append(marks, "↻"+a)
		}
	}
	if v, _ := s.Attr(traces.KeyMisdelivered); v == "true" {
		marks = append(marks, "⇄")
	}
	if v, _ := s.Attr(traces.KeyRerouted); v == "true" {
		marks = append(marks, "↪")
	}
	if v, _ := s.Attr(traces.KeyReadStale); v == "true" {
		marks = append(marks, "~stale")
	}
	if v, _ := s.Attr(traces.KeyRunsGetReason); v == "last_completer" {
		marks = append(marks, "lazy")
	}
	switch v, _ := s.Attr(highlightKey); v {
	case "run_context":
		marks = append(marks, "ctx")
	case "runs_get":
		marks = append(marks, "get")
	}
	return strings.Join(marks, " ")
}

// fitLabel fits a span's label into w cells keeping its end, which tells
// spans of one kind apart (the event of world.events.create step_started,
// the step of step.execute branch fanout0.branch1): the leading parts of
// its dotted name give way first (events.create step_started, then
// create step_started), then its leading words (step_started), and only
// then is the end cut.
func fitLabel(label string, w int) string {
	for width(label) > w {
		head, rest, ok := strings.Cut(label, ".")
		if !ok || strings.Contains(head, " ") {
			break
		}
		label = rest
	}
	for width(label) > w {
		_, rest, ok := strings.Cut(label, " ")
		if !ok {
			break
		}
		label = rest
	}
	return label
}

// spanLabel is a span's name in the timeline: a step execution, which the
// real engine names by its step function alone, gets simlab's step label
// (fanout0.branch1) beside it, so that branches are told apart.
func spanLabel(s *traces.Span) string {
	if l, ok := s.Attr(traces.KeyStepLabel); ok && strings.HasPrefix(s.Name, traces.StepSpanPrefix) {
		return s.Name + " " + l
	}
	return s.Name
}
