package tui

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"sync/atomic"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// view is what every screen of the breadcrumb stack is.
type view interface {
	tview.Primitive
	kind() ViewKind
	crumb() string
}

// mover is a view whose rows j/k/g/G move through.
type mover interface{ move(delta int) }

// scroller is a view whose columns h/l (←/→) scroll.
type scroller interface{ scroll(delta int) }

// pager is a view with a text pane d/u (PgDn/PgUp) scroll by half of it.
type pager interface{ page(delta int) }

// filterable is a view `/` filters.
type filterable interface {
	setFilter(filter)
	currentFilter() filter
}

// Options configure an App.
type Options struct {
	// Config is what :seed and the knobs form start from; Runs are shown.
	Config Config
	Runs   []*Run
	// Origin says what the session was opened on, for the header.
	Origin string
	// Log receives what the TUI does; never the screen. Nil discards.
	Log *slog.Logger
	// Screen is the terminal; nil opens the real one (tests pass a
	// tcell.SimulationScreen).
	Screen tcell.Screen
	// Notice, if set, is the first message shown (an error when Warn),
	// instead of the count of runs: what the command line's simulation
	// left undone, say.
	Notice string
	Warn   bool
	// OnInterrupt is what Ctrl-C does: in raw mode the key sends no
	// signal, so simlab tui raises SIGINT at itself here and ends as on
	// any interrupt (exit 130). Nil: Ctrl-C quits as q does.
	OnInterrupt func()
}

// App is the terminal lab: a breadcrumb stack of views over one session.
type App struct {
	tv     *tview.Application
	sess   *session
	log    *slog.Logger
	stack  []view
	pages  *tview.Pages
	header *header
	footer *footer
	prompt *prompt
	guard  *sizeGuard
	runs   *runsView
	// filterBefore is the filter to restore when Esc abandons a `/`.
	filterBefore filter
	quitting     bool
	// job is the simulation running off the UI goroutine, if any; post
	// runs a function on the UI goroutine (tview's QueueUpdateDraw; a
	// test's harness drains them itself).
	job  *job
	post func(func())
	// onInterrupt is Options.OnInterrupt.
	onInterrupt func()
}

// job is one simulation of a session's seeds, run on its own goroutine so
// that the screen keeps drawing and answering keys: esc (or quitting)
// cancels it between seeds or stages.
type job struct {
	cfg    Config
	cancel atomic.Bool
}

// ErrNoRuns is returned by New when there is nothing to show.
var ErrNoRuns = errors.New("tui: no runs to show")

// New builds the app over runs already loaded or simulated, so that every
// error of the input surfaces before the screen opens.
func New(opts Options) (*App, error) {
	if len(opts.Runs) == 0 {
		return nil, ErrNoRuns
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	a := &App{
		tv:     tview.NewApplication(),
		sess:   &session{cfg: opts.Config.clone(), origin: opts.Origin},
		log:    log,
		pages:  tview.NewPages(),
		header: newHeader(),
		footer: newFooter(),
		prompt: newPrompt(),

		onInterrupt: opts.OnInterrupt,
	}
	a.post = func(f func()) { a.tv.QueueUpdateDraw(f) }
	a.sess.add(opts.Runs)
	layout := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(a.header, 1, 0, false).
		AddItem(a.pages, 0, 1, true).
		AddItem(a.prompt, 1, 0, false).
		AddItem(a.footer, 2, 0, false)
	a.guard = newSizeGuard(layout)
	a.guard.layout = func(w, _ int) {
		layout.ResizeItem(a.footer, a.footer.lines(w), 0)
		layout.ResizeItem(a.prompt, a.prompt.lines(w), 0)
	}
	a.prompt.onChange = a.promptChanged
	a.prompt.onDone = a.promptDone
	a.runs = newRunsView(a.sess)
	a.push(a.runs)
	a.tv.SetRoot(a.guard, true).SetInputCapture(a.capture)
	if opts.Screen != nil {
		a.tv.SetScreen(opts.Screen)
	}
	a.say(fmt.Sprintf("%s of %s · ⏎ opens a run · ? help", plural(len(a.sess.runs), "run"), a.sess.origin), false)
	if opts.Notice != "" {
		a.say(opts.Notice, opts.Warn)
	}
	return a, nil
}

// Stop ends Run from any goroutine, as q does (a running simulation is
// cancelled): a signal's handler calls it, so that the terminal is restored
// before the process exits.
func (a *App) Stop() { a.tv.QueueUpdate(a.quit) }

// Run shows the app until q; it blocks.
func (a *App) Run() error {
	a.log.Info("tui started", "runs", len(a.sess.runs), "origin", a.sess.origin, "pid", os.Getpid())
	err := a.tv.Run()
	a.log.Info("tui stopped", "err", err)
	if err != nil {
		return fmt.Errorf("tui: %w", err)
	}
	return nil
}

// Root is the primitive the whole screen is drawn from (tests draw it).
func (a *App) Root() tview.Primitive { return a.guard }

func (a *App) top() view { return a.stack[len(a.stack)-1] }

// push opens a view on top of the breadcrumb.
func (a *App) push(v view) {
	a.stack = append(a.stack, v)
	a.pages.AddAndSwitchToPage(fmt.Sprintf("v%d", len(a.stack)), v, true)
	a.tv.SetFocus(v)
	a.chrome()
}

// pop closes the top view; the root view stays.
func (a *App) pop() bool {
	if len(a.stack) <= 1 {
		return false
	}
	a.pages.RemovePage(fmt.Sprintf("v%d", len(a.stack)))
	a.stack = a.stack[:len(a.stack)-1]
	a.pages.SwitchToPage(fmt.Sprintf("v%d", len(a.stack)))
	a.tv.SetFocus(a.top())
	a.chrome()
	return true
}

// popTo closes views until the runs view is on top.
func (a *App) popTo() {
	for a.pop() {
	}
}

// chrome updates the header's breadcrumb and the footer's hints.
func (a *App) chrome() {
	a.header.crumbs = a.header.crumbs[:0]
	for _, v := range a.stack {
		a.header.crumbs = append(a.header.crumbs, v.crumb())
	}
	cfg := a.sess.cfg
	right := cfg.Scenario + " · seeds " + seedList(cfg.Seeds)
	if len(cfg.Variants) > 0 {
		right += " · " + strings.Join(cfg.Variants, ",")
	}
	if len(cfg.Sets) > 0 {
		right += fmt.Sprintf(" · %d --set", len(cfg.Sets))
	}
	if !a.sess.simulated && a.sess.origin != cfg.Scenario {
		// Opened on a trace file and nothing simulated yet: the runs shown
		// are the file's, whatever :seed would simulate.
		right = "file " + a.sess.origin
	}
	a.header.right = right
	a.footer.view = a.top().kind()
	a.prompt.idle = ""
	if f, ok := a.top().(filterable); ok && f.currentFilter().active() {
		a.prompt.idle = "filter /" + f.currentFilter().String() + " · esc clears it"
	}
}

func (a *App) say(msg string, isError bool) {
	a.prompt.say(msg, isError)
	if isError {
		a.log.Warn("message", "text", msg)
	}
}

// capture sees every key first. The prompt and the knobs form own their
// keys; everywhere else the keymap decides, and keys it does not bind go
// on to the view (PgUp/PgDn in a table, say).
func (a *App) capture(ev *tcell.EventKey) *tcell.EventKey {
	if ev.Key() == tcell.KeyCtrlC {
		// Everywhere, the prompt and the form too: the user's interrupt.
		a.do(ActInterrupt)
		return nil
	}
	if a.prompt.active() {
		return ev
	}
	if a.job != nil {
		// The simulation runs on; esc cancels it, q and Ctrl-C quit (and
		// cancel it). Every other key works as ever.
		if ev.Key() == tcell.KeyEscape {
			a.cancelJob()
			return nil
		}
	} else {
		a.prompt.say("", false)
	}
	if a.guard.small {
		// Nothing else can be seen to act on; only quitting makes sense.
		if b, ok := lookupBinding(ViewRuns, ev); ok && b.Action == ActQuit {
			a.quit()
		}
		return nil
	}
	k := a.top().kind()
	if k == ViewForm {
		return ev
	}
	if b, ok := lookupBinding(k, ev); ok {
		a.do(b.Action)
		return nil
	}
	return ev
}

// HandleKey runs one key press as the event loop would: capture, then the
// focused view. Tests drive the app through it, synchronously.
func (a *App) HandleKey(ev *tcell.EventKey) {
	if out := a.capture(ev); out != nil {
		if h := a.guard.InputHandler(); h != nil {
			h(out, func(p tview.Primitive) { a.tv.SetFocus(p) })
		}
	}
}

func (a *App) quit() {
	if a.job != nil {
		a.job.cancel.Store(true)
	}
	a.quitting = true
	a.log.Info("quit")
	a.tv.Stop()
}

// do carries out one keymap action in the current view.
func (a *App) do(act Action) {
	v := a.top()
	a.log.Debug("action", "action", string(act), "view", string(v.kind()))
	switch act {
	case ActQuit:
		a.quit()
	case ActInterrupt:
		if a.onInterrupt == nil {
			a.quit()
			return
		}
		a.log.Info("interrupt key")
		a.onInterrupt()
	case ActHelp:
		if v.kind() != ViewHelp {
			a.push(newHelpView())
		}
	case ActCommand:
		a.prompt.open(promptCommand, "")
		a.tv.SetFocus(a.prompt)
	case ActFilter:
		if f, ok := v.(filterable); ok {
			// The prompt starts empty, as in k9s: typing replaces the
			// filter, and Esc brings the old one back.
			a.filterBefore = f.currentFilter()
			a.prompt.open(promptFilter, "")
			a.tv.SetFocus(a.prompt)
		}
	case ActBack:
		a.back()
	case ActDown, ActUp, ActTop, ActBottom:
		if m, ok := v.(mover); ok {
			m.move(map[Action]int{ActDown: 1, ActUp: -1, ActTop: math.MinInt32, ActBottom: math.MaxInt32}[act])
		}
	case ActOpen:
		a.open()
	case ActSort:
		a.say("sorted by "+a.runs.cycleSort(), false)
	case ActReverse:
		a.runs.reverse()
	case ActMark:
		a.runs.toggleMark()
		if a.runs.marked != nil {
			a.say(fmt.Sprintf("marked #%d; select another run and press c to compare", a.runs.marked.No), false)
		}
	case ActCompare:
		a.compareMarked()
	case ActEdit:
		a.edit()
	case ActProperties:
		if r := a.currentRun(); r != nil {
			if _, ok := a.backTo(func(v view) bool { p, ok := v.(*propertiesView); return ok && p.run == r }); !ok {
				a.push(newPropertiesView(r))
			}
		}
	case ActFold:
		if tl, ok := v.(*timelineView); ok && !tl.toggleFold() {
			a.say("nothing to fold here: the span has no children (or a filter is on)", false)
		}
	case ActPageDown, ActPageUp:
		if p, ok := v.(pager); ok {
			p.page(map[Action]int{ActPageDown: 1, ActPageUp: -1}[act])
		}
	case ActLeft, ActRight:
		if sc, ok := v.(scroller); ok {
			sc.scroll(map[Action]int{ActLeft: -1, ActRight: 1}[act])
		}
	case ActNextEvent, ActPrevEvent:
		if tl, ok := v.(*timelineView); ok {
			tl.step(map[Action]int{ActNextEvent: 1, ActPrevEvent: -1}[act])
		}
	}
	a.chrome()
}

// back clears the view's filter if it has one, else pops the breadcrumb.
func (a *App) back() {
	if f, ok := a.top().(filterable); ok && f.currentFilter().active() {
		f.setFilter(filter{})
		return
	}
	if !a.pop() {
		a.say("this is the first view; q quits", false)
	}
}

// currentRun is the run the top view is about: the selected one in the
// runs view.
func (a *App) currentRun() *Run {
	for i := len(a.stack) - 1; i >= 0; i-- {
		switch v := a.stack[i].(type) {
		case *runsView:
			return v.selected()
		case *timelineView:
			return v.run
		case *detailView:
			return v.run
		case *propertiesView:
			return v.run
		}
	}
	return nil
}

// open drills into the selection of the top view.
func (a *App) open() {
	switch v := a.top().(type) {
	case *runsView:
		if r := v.selected(); r != nil {
			a.push(newTimelineView(r))
		}
	case *timelineView:
		if i, ok := v.selectedSpan(); ok {
			a.push(newDetailView(v.run, i))
		}
	case *detailView:
		id, ok := v.selectedLink()
		if !ok {
			return
		}
		j, found := v.run.span(id)
		if !found {
			a.say("the linked span "+id+" is not in this trace (sampled away, or in another file)", true)
			return
		}
		a.push(newDetailView(v.run, j))
	case *propertiesView:
		at, ok := v.firstEvidence()
		if !ok {
			a.say("no violation to show on the timeline", false)
			return
		}
		// Back to the run's timeline if it is open below, else a new one:
		// going to and fro between verdicts and timeline keeps the
		// breadcrumb as deep as it was.
		if tl, ok := a.backTo(func(w view) bool { t, ok := w.(*timelineView); return ok && t.run == v.run }); ok {
			tl.(*timelineView).seek(at)
			return
		}
		tl := newTimelineView(v.run)
		tl.seek(at)
		a.push(tl)
	}
}

// backTo closes views down to the nearest one below the top that match
// says is the view to go to, and reports it; if none matches it closes
// nothing.
func (a *App) backTo(match func(view) bool) (view, bool) {
	for i := len(a.stack) - 2; i >= 0; i-- {
		if match(a.stack[i]) {
			for len(a.stack) > i+1 {
				a.pop()
			}
			return a.stack[i], true
		}
	}
	return nil, false
}

func (a *App) compareMarked() {
	m, r := a.runs.marked, a.runs.selected()
	switch {
	case m == nil:
		a.say("mark a run with m first, then select another and press c", true)
	case r == nil || r == m:
		a.say("select a run other than the marked one", true)
	default:
		a.push(newCompareView(m, r))
	}
}

// edit opens the knobs form for the current run's config (or the
// session's, for a run read from a file).
func (a *App) edit() {
	cfg := a.sess.cfg
	if r := a.currentRun(); r != nil && r.file == "" {
		cfg = r.cfg
		cfg.Seeds = a.sess.cfg.Seeds
	}
	form, err := newKnobsForm(cfg, func(c Config) error {
		err := a.simulate(c, nil)
		if err != nil {
			a.say(err.Error(), true)
		}
		return err
	}, func() { a.pop() })
	if err != nil {
		a.say(err.Error(), true)
		return
	}
	a.push(form)
}

// simulate checks cfg and, if it is good, simulates it off the UI
// goroutine (a fan-out of 20000 branches takes seconds a seed), saying how
// far it got; then adds its runs and shows them in the runs view with the
// first selected, and the config becomes the session's, then then (if set)
// runs. A bad config is an error at once; one simulation runs at a time.
func (a *App) simulate(cfg Config, then func()) error {
	if a.job != nil {
		return errors.New("a simulation is running: wait for it, or esc cancels it")
	}
	if err := cfg.Check(); err != nil {
		return err
	}
	j := &job{cfg: cfg.clone()}
	a.job = j
	what := fmt.Sprintf("%s, seeds %s", cfg.Scenario, seedList(cfg.Seeds))
	a.say("simulating "+what+"… esc cancels", false)
	budget := MaxSessionSpans
	for _, r := range a.sess.runs {
		budget -= len(r.Spans)
	}
	go func() {
		runs, err := SimulateWith(j.cfg, SimOptions{
			Stop:  j.cancel.Load,
			Spans: max(budget, 1),
			Progress: func(done, total int) {
				a.post(func() {
					if a.job == j && !j.cancel.Load() {
						a.say(fmt.Sprintf("simulating %s: %d of %d seeds done… esc cancels", what, done, total), false)
					}
				})
			},
		})
		a.post(func() { a.finish(j, runs, err, then) })
	}()
	return nil
}

// cancelJob asks the running simulation to stop at its next step.
func (a *App) cancelJob() {
	if a.job != nil && !a.job.cancel.Swap(true) {
		a.say("cancelling the simulation…", false)
		a.log.Info("simulation cancelled")
	}
}

// finish shows what job j simulated: every run it finished is kept, also
// when it was cancelled or stopped at the span limit.
func (a *App) finish(j *job, runs []*Run, err error, then func()) {
	if a.job != j {
		return
	}
	a.job = nil
	if a.quitting {
		return
	}
	var limit *SpanLimitError
	stopped := errors.Is(err, ErrStopped) || errors.As(err, &limit)
	if err != nil && !stopped {
		a.say(err.Error(), true)
		a.chrome()
		return
	}
	cfg := j.cfg
	a.log.Info("simulated", "scenario", cfg.Scenario, "sets", cfg.Sets, "variants", cfg.Variants,
		"seeds", seedList(cfg.Seeds), "runs", len(runs), "err", err)
	if len(runs) == 0 {
		switch {
		case limit != nil:
			a.say(limit.Error(), true)
		default:
			a.say("simulation cancelled before its first seed; nothing changed", false)
		}
		a.chrome()
		return
	}
	a.sess.cfg = cfg.clone()
	a.sess.simulated = true
	rows := a.sess.add(runs)
	a.popTo()
	a.runs.refresh()
	if then != nil && !stopped {
		then()
	}
	hidden := len(rows) > 0 && !a.runs.selectRun(rows[0])
	switch {
	case limit != nil:
		a.say(limit.Error(), true)
	case stopped:
		a.say(fmt.Sprintf("cancelled: %s of %s kept (%s now)", plural(len(rows), "run"), cfg.Scenario, plural(len(a.sess.runs), "row")), false)
	case hidden:
		a.say("the new runs are hidden by the filter; esc clears it", false)
	default:
		a.say(fmt.Sprintf("%s of %s, seeds %s (%s now)", plural(len(rows), "run"), cfg.Scenario, seedList(cfg.Seeds),
			plural(len(a.sess.runs), "row")), false)
	}
	a.chrome()
}

func (a *App) promptChanged(mode promptMode, text string) {
	if mode != promptFilter {
		return
	}
	if f, ok := a.top().(filterable); ok {
		f.setFilter(parseFilter(text))
		a.chrome()
	}
}

func (a *App) promptDone(mode promptMode, text string, key tcell.Key) {
	a.tv.SetFocus(a.top())
	switch {
	case mode == promptFilter && key == tcell.KeyEscape:
		if f, ok := a.top().(filterable); ok {
			f.setFilter(a.filterBefore)
		}
	case mode == promptFilter:
		if f, ok := a.top().(filterable); ok {
			f.setFilter(parseFilter(text))
			a.log.Info("filter", "view", string(a.top().kind()), "filter", text)
		}
	case mode == promptCommand && key == tcell.KeyEnter && strings.TrimSpace(text) != "":
		if err := a.execute(text); err != nil {
			a.say(err.Error(), true)
		}
	}
	a.chrome()
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
