package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/simlab/simlab/traces"
)

// highlightKey is the attribute the lab exists to show (DOMAIN §8): which
// prologue a step delivery took. The detail view paints it.
const highlightKey = traces.KeyDispatchPrologue

// detailRow is one row of the span detail and what Enter does on it.
type detailRow struct {
	key, value string
	section    bool   // a heading, not selectable
	link       string // for a link row: the linked span's id
	style      tcell.Style
	filterable bool // attributes, events and resource rows yield to the filter
}

// detailView is one span: its identity and timing, attributes (sorted, the
// dispatch prologue highlighted), events, links (Enter jumps) and resource.
type detailView struct {
	*tview.Table
	run    *Run
	span   int
	rows   []detailRow
	shown  []int // indices into rows
	filter filter
}

func newDetailView(r *Run, span int) *detailView {
	v := &detailView{Table: tview.NewTable(), run: r, span: span}
	v.SetSelectable(true, false).SetSelectedStyle(styleSelected)
	v.build()
	v.refresh()
	return v
}

func (v *detailView) kind() ViewKind { return ViewDetail }

func (v *detailView) crumb() string {
	s := "span " + v.run.Spans[v.span].Name
	if v.filter.active() {
		s += " /" + v.filter.String()
	}
	return s
}

// attrValue renders an attribute for people: an instant given as unix
// nanoseconds becomes an offset from the run's start, because the screen
// never shows wall-clock time.
func (v *detailView) attrValue(a traces.Attr) string {
	if strings.HasSuffix(a.Key, "_unix_nano") {
		if n, err := strconv.ParseInt(a.Value, 10, 64); err == nil {
			return fmtOffset(time.Unix(0, n).Sub(v.run.Start)) + " (as an offset from the run's start)"
		}
	}
	return a.Value
}

func (v *detailView) build() {
	r, s := v.run, &v.run.Spans[v.span]
	info := func(k, val string) {
		v.rows = append(v.rows, detailRow{key: k, value: val, style: styleBase})
	}
	section := func(title string, n int) {
		v.rows = append(v.rows, detailRow{key: fmt.Sprintf("%s (%d)", title, n), section: true, style: styleHeader})
	}
	info("name", s.Name)
	kind := s.Kind + " · service " + s.Service
	if s.StatusCode != "" {
		kind += " · status " + s.StatusCode
		if s.StatusMessage != "" {
			kind += ": " + s.StatusMessage
		}
	}
	info("kind", kind)
	parent := "none (the run's root)"
	if p, ok := r.span(s.ParentID); ok {
		parent = r.Spans[p].Name + " " + s.ParentID
	}
	info("span", s.SpanID+" · trace "+s.TraceID)
	info("parent", parent)
	info("time", fmt.Sprintf("%s → %s · %s", fmtOffset(r.offset(s.Start)), fmtOffset(r.offset(s.End)), fmtDur(s.End.Sub(s.Start))))
	if tag := deploymentTag(r, v.span); tag != "" {
		info("handled by", tag)
	}

	section("ATTRIBUTES", len(s.Attrs))
	for _, a := range s.Attrs {
		st := styleBase
		if a.Key == highlightKey {
			st = styleHighlight
		}
		v.rows = append(v.rows, detailRow{key: "  " + a.Key, value: v.attrValue(a), style: st, filterable: true})
	}
	section("EVENTS", len(s.Events))
	for _, e := range s.Events {
		var kv []string
		for _, a := range e.Attrs {
			kv = append(kv, a.Key+"="+a.Value)
		}
		v.rows = append(v.rows, detailRow{key: "  " + fmtOffset(r.offset(e.Time)) + " " + e.Name,
			value: strings.Join(kv, " "), style: styleBase, filterable: true})
	}
	section("LINKS", len(s.Links))
	for _, l := range s.Links {
		target := "not in this trace file"
		if j, ok := r.span(l.SpanID); ok {
			t := &r.Spans[j]
			target = fmt.Sprintf("%s at %s · ⏎ jumps there", t.Name, fmtOffset(r.offset(t.Start)))
		}
		v.rows = append(v.rows, detailRow{key: "  → " + l.SpanID, value: target, link: l.SpanID, style: styleKey})
	}
	section("RESOURCE", len(s.Resource))
	for _, a := range s.Resource {
		v.rows = append(v.rows, detailRow{key: "  " + a.Key, value: a.Value, style: styleDim, filterable: true})
	}
}

func (v *detailView) refresh() {
	v.Clear()
	v.shown = v.shown[:0]
	for i, row := range v.rows {
		if row.filterable && !v.filter.matchFields([]traces.Attr{{Key: strings.TrimSpace(row.key), Value: row.value}, {Key: "", Value: row.key}}) {
			continue
		}
		n := len(v.shown)
		v.shown = append(v.shown, i)
		key := tview.NewTableCell(tview.Escape(row.key)).SetStyle(row.style).SetSelectable(!row.section)
		val := tview.NewTableCell(tview.Escape(row.value)).SetStyle(row.style).SetSelectable(!row.section).SetExpansion(1)
		if _, bg, _ := row.style.Decompose(); bg != tcell.ColorBlack {
			// Table cells are transparent unless given a background.
			key.SetBackgroundColor(bg)
			val.SetBackgroundColor(bg)
		}
		v.SetCell(n, 0, key)
		v.SetCell(n, 1, val)
	}
	if v.filter.active() && !slices.ContainsFunc(v.shown, func(i int) bool { return v.rows[i].filterable }) {
		// Only headings and links are left: say why, below them.
		n := v.GetRowCount()
		v.SetCell(n, 0, tview.NewTableCell("").SetSelectable(false))
		v.SetCell(n, 1, tview.NewTableCell(tview.Escape("nothing here matches /"+v.filter.String()+" · esc clears the filter")).
			SetStyle(styleDim).SetSelectable(false))
	}
	v.selectFirst()
}

// selectFirst puts the cursor where the eye goes: the first row the filter
// kept, else the dispatch prologue, else the first attribute.
func (v *detailView) selectFirst() {
	first, attr := -1, -1
	for n, i := range v.shown {
		row := &v.rows[i]
		switch {
		case row.section:
			continue
		case v.filter.active() && row.filterable:
			v.Select(n, 0)
			return
		case strings.TrimSpace(row.key) == highlightKey:
			v.Select(n, 0)
			return
		case row.filterable && attr < 0:
			attr = n
		case first < 0:
			first = n
		}
	}
	if attr >= 0 {
		first = attr
	}
	if first >= 0 {
		v.Select(first, 0)
	}
}

func (v *detailView) move(delta int) { moveTable(v.Table, delta) }

// selectedLink is the span id of the link under the cursor, if it is one.
func (v *detailView) selectedLink() (string, bool) {
	row, _ := v.GetSelection()
	if row < 0 || row >= len(v.shown) {
		return "", false
	}
	l := v.rows[v.shown[row]].link
	return l, l != ""
}

func (v *detailView) setFilter(f filter) { v.filter = f; v.refresh() }

func (v *detailView) currentFilter() filter { return v.filter }
