package report

import (
	"fmt"
	"html/template"
	"io"
	"sort"
	"time"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/traces"
)

// Row is one span of a waterfall: its depth in the trace, its name and
// service, and where its bar lies on the trace's virtual time (percent).
type Row struct {
	Depth              int
	Name, Service      string
	Start, End         time.Duration // virtual time from the trace's start
	Left, Width        float64       // percent of the trace's length
	Error              bool
	StatusMessage      string
	StartText, DurText string
}

// Waterfall is the trace of one workflow run of a counterexample.
type Waterfall struct {
	Run    string
	Length time.Duration
	Rows   []Row
	Ticks  []Tick
}

// Tick is a label on the waterfall's time axis.
type Tick struct {
	Left float64
	Text string
}

// WaterfallOf replays the schedule file and lays out the spans of run's
// trace (every span of the run, parents before children) on virtual time.
func WaterfallOf(scheduleFile, run string) (*Waterfall, error) {
	s, err := check.LoadSchedule(scheduleFile)
	if err != nil {
		return nil, err
	}
	res, _, err := s.Replay()
	if err != nil {
		return nil, err
	}
	ro, err := traces.Build(res.History, traces.Options{})
	if err != nil {
		return nil, err
	}
	all := traces.FromReadOnly(ro)
	byTrace := map[string][]traces.Span{}
	var order []string
	for _, sp := range all {
		if _, ok := byTrace[sp.TraceID]; !ok {
			order = append(order, sp.TraceID)
		}
		byTrace[sp.TraceID] = append(byTrace[sp.TraceID], sp)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("schedule %s: the replay made no spans", scheduleFile)
	}
	pick := order[0]
	for _, id := range order {
		for _, sp := range byTrace[id] {
			if v, ok := sp.Attr(traces.KeyRunID); ok && v == run && sp.ParentID == "" {
				pick = id
			}
		}
	}
	spans := byTrace[pick]
	tree, err := traces.NewTree(spans)
	if err != nil {
		return nil, err
	}
	t0, t1 := spans[tree.Root].Start, spans[tree.Root].End
	for _, sp := range spans {
		if sp.Start.Before(t0) {
			t0 = sp.Start
		}
		if sp.End.After(t1) {
			t1 = sp.End
		}
	}
	length := t1.Sub(t0)
	if length <= 0 {
		length = 1
	}
	w := &Waterfall{Run: run, Length: length}
	pct := func(d time.Duration) float64 { return 100 * float64(d) / float64(length) }
	var walk func(i int)
	walk = func(i int) {
		sp := spans[i]
		st, en := sp.Start.Sub(t0), sp.End.Sub(t0)
		r := Row{Depth: tree.Depth[i], Name: sp.Name, Service: sp.Service, Start: st, End: en,
			Left: pct(st), Width: max(pct(en-st), 0.25), Error: sp.StatusCode == "error", StatusMessage: sp.StatusMessage,
			StartText: "+" + st.Round(time.Microsecond).String(), DurText: (en - st).Round(time.Microsecond).String()}
		if r.Left+r.Width > 100 {
			r.Left = 100 - r.Width
		}
		w.Rows = append(w.Rows, r)
		kids := append([]int(nil), tree.Children[i]...)
		sort.SliceStable(kids, func(a, b int) bool { return spans[kids[a]].Start.Before(spans[kids[b]].Start) })
		for _, c := range kids {
			walk(c)
		}
	}
	walk(tree.Root)
	for k := 0; k <= 4; k++ {
		d := length * time.Duration(k) / 4
		w.Ticks = append(w.Ticks, Tick{Left: pct(d), Text: "+" + d.Round(time.Millisecond).String()})
	}
	return w, nil
}

// Section is one violated property on the page.
type Section struct {
	Case
	Waterfall *Waterfall
	// WaterfallError says why there is no waterfall (no schedule saved, or
	// it did not replay).
	WaterfallError string
}

// Page is one check's HTML report.
type Page struct {
	Check
	Sections []Section
}

// NewPage builds the page of a check: a section per failed property (and
// per known one, marked so), each with the waterfall of its shrunk
// counterexample's run.
func NewPage(c Check) Page {
	p := Page{Check: c}
	for _, k := range c.Cases {
		if !k.Failed && k.Known == "" {
			continue
		}
		s := Section{Case: k}
		switch {
		case k.First == nil:
			s.WaterfallError = "no counterexample kept for this property (every violation is a known finding)"
		case k.First.ScheduleFile == "":
			s.WaterfallError = "no schedule was saved (check --schedules DIR saves one)"
		default:
			w, err := WaterfallOf(k.First.ScheduleFile, k.First.Run)
			if err != nil {
				s.WaterfallError = err.Error()
			} else {
				s.Waterfall = w
			}
		}
		p.Sections = append(p.Sections, s)
	}
	return p
}

// HTML writes the page: one self-contained document (inline style, no
// script, nothing loaded from anywhere), what a CI artifact link opens.
func HTML(w io.Writer, p Page) error { return pageTemplate.Execute(w, p) }

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"pct":    func(f float64) string { return fmt.Sprintf("%.3f%%", f) },
	"indent": func(d int) string { return fmt.Sprintf("%dpx", 8+14*d) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>simlab check {{.Name}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1d2330; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 28px 0 6px; }
.summary { color: #4a5468; }
table.verdicts { border-collapse: collapse; margin: 12px 0; }
table.verdicts td, table.verdicts th { text-align: left; padding: 3px 10px; border-bottom: 1px solid #e3e6ec; }
.failed { color: #b3261e; font-weight: 600; }
.known { color: #7a5b00; }
.held { color: #1e7a34; }
pre { background: #f5f6f8; padding: 10px; overflow-x: auto; font: 12px/1.45 ui-monospace, monospace; white-space: pre; }
code.replay { display: block; background: #f5f6f8; padding: 8px 10px; font: 12px ui-monospace, monospace; word-break: break-all; }
.waterfall { border: 1px solid #d8dce4; margin-top: 8px; }
.axis, .row { display: grid; grid-template-columns: 38% 62%; }
.axis { border-bottom: 1px solid #d8dce4; font-size: 11px; color: #4a5468; height: 18px; }
.axis .track, .row .track { position: relative; }
.tick { position: absolute; top: 2px; transform: translateX(-50%); white-space: nowrap; }
.tick:first-child { transform: none; }
.tick:last-child { transform: translateX(-100%); }
.row { font-size: 12px; height: 20px; align-items: center; border-bottom: 1px solid #f0f1f4; }
.label { overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.svc { color: #8a93a6; }
.bar { position: absolute; top: 4px; height: 12px; background: #4f7cd6; border-radius: 2px; min-width: 2px; }
.bar.error { background: #d0453a; }
.notes li { color: #4a5468; }
</style>
</head>
<body>
<h1>simlab check {{.Name}}</h1>
<p class="summary">scenario {{.Scenario}} · {{.Seeds}} seeds · virtual time only</p>
<table class="verdicts">
<tr><th>property</th><th>verdict</th></tr>
{{range .Cases}}<tr><td>{{.Property}}</td><td class="{{if .Failed}}failed{{else if .Known}}known{{else}}held{{end}}">{{.Summary}}</td></tr>
{{end}}</table>
{{if .Missing}}<p class="failed">coverage: never happened: {{range $i, $m := .Missing}}{{if $i}}, {{end}}{{$m}}{{end}}</p>{{end}}
{{if .Notes}}<ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{range .Sections}}<section class="violation" id="{{.Property}}">
<h2 class="{{if .Failed}}failed{{else}}known{{end}}">{{.Property}}{{if not .Failed}} (known finding){{end}}</h2>
<p>{{.Summary}}</p>
{{if .Known}}<p class="known">known finding: {{.Known}}</p>{{end}}
{{with .First}}<pre class="story">{{range .Story}}{{.}}
{{end}}</pre>
<p>replay:</p><code class="replay">{{.Replay}}</code>
{{if .ScheduleFile}}<p>schedule file: <code>{{.ScheduleFile}}</code></p>{{end}}{{end}}
{{if .BaseReplay}}<p>without the change:</p><code class="replay">{{.BaseReplay}}</code>{{end}}
{{with .Waterfall}}<p>the shrunk counterexample's run {{.Run}} on virtual time ({{.Length}}):</p>
<div class="waterfall">
<div class="axis"><div></div><div class="track">{{range .Ticks}}<span class="tick" style="left: {{pct .Left}}">{{.Text}}</span>{{end}}</div></div>
{{range .Rows}}<div class="row" title="{{.Name}} {{.StartText}} for {{.DurText}}{{if .StatusMessage}}: {{.StatusMessage}}{{end}}"><div class="label" style="padding-left: {{indent .Depth}}">{{.Name}} <span class="svc">{{.Service}}</span></div><div class="track"><div class="bar{{if .Error}} error{{end}}" style="left: {{pct .Left}}; width: {{pct .Width}}"></div></div></div>
{{end}}</div>{{end}}
{{if .WaterfallError}}<p class="summary">no waterfall: {{.WaterfallError}}</p>{{end}}
</section>
{{end}}</body>
</html>
`))
