package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gdamore/tcell/v2"
)

// ViewKind names a view; the keymap says in which views a key applies.
type ViewKind string

// The views.
const (
	ViewRuns       ViewKind = "runs"
	ViewTimeline   ViewKind = "timeline"
	ViewDetail     ViewKind = "span"
	ViewProperties ViewKind = "properties"
	ViewCompare    ViewKind = "compare"
	ViewHelp       ViewKind = "help"
	ViewForm       ViewKind = "knobs"
)

// allViews lists the views a global binding applies to, in help order. The
// knobs form is absent on purpose: it takes every key for its fields.
var allViews = []ViewKind{ViewRuns, ViewTimeline, ViewDetail, ViewProperties, ViewCompare, ViewHelp}

// Action is what a binding does; App.do carries it out.
type Action string

// The actions.
const (
	ActDown       Action = "down"
	ActUp         Action = "up"
	ActTop        Action = "top"
	ActBottom     Action = "bottom"
	ActOpen       Action = "open"
	ActBack       Action = "back"
	ActFilter     Action = "filter"
	ActCommand    Action = "command"
	ActHelp       Action = "help"
	ActQuit       Action = "quit"
	ActInterrupt  Action = "interrupt"
	ActSort       Action = "sort"
	ActReverse    Action = "reverse"
	ActMark       Action = "mark"
	ActCompare    Action = "compare"
	ActEdit       Action = "knobs"
	ActProperties Action = "props"
	ActFold       Action = "fold"
	ActNextEvent  Action = "next"
	ActPrevEvent  Action = "prev"
	ActLeft       Action = "left"
	ActRight      Action = "right"
	ActPageDown   Action = "pgdown"
	ActPageUp     Action = "pgup"
)

// Key is one key press a binding answers to: a special key, or a rune.
type Key struct {
	Key  tcell.Key
	Rune rune
}

func runeKey(r rune) Key { return Key{Key: tcell.KeyRune, Rune: r} }

// Binding is one row of the keymap. The same row drives what the key does,
// the `?` help screen and the footer's hint line, so none can drift from
// the others.
type Binding struct {
	Keys   []Key
	Label  string     // how help and footer write the keys
	Views  []ViewKind // where it applies
	Action Action
	Help   string
}

// Keymap is every binding. Plain navigation keys only move, open or go back;
// anything that runs a simulation sits behind `:` or the knobs form's Run
// button, and quitting is its own key.
var Keymap = []Binding{
	{Keys: []Key{runeKey('j'), {Key: tcell.KeyDown}}, Label: "j/↓", Views: allViews, Action: ActDown, Help: "move down one row"},
	{Keys: []Key{runeKey('k'), {Key: tcell.KeyUp}}, Label: "k/↑", Views: allViews, Action: ActUp, Help: "move up one row"},
	{Keys: []Key{runeKey('g'), {Key: tcell.KeyHome}}, Label: "g", Views: allViews, Action: ActTop, Help: "go to the first row"},
	{Keys: []Key{runeKey('G'), {Key: tcell.KeyEnd}}, Label: "G", Views: allViews, Action: ActBottom, Help: "go to the last row"},
	{Keys: []Key{runeKey('h'), {Key: tcell.KeyLeft}}, Label: "h/←", Views: []ViewKind{ViewRuns}, Action: ActLeft,
		Help: "scroll the columns left (columns that do not fit wait to the right)"},
	{Keys: []Key{runeKey('l'), {Key: tcell.KeyRight}}, Label: "l/→", Views: []ViewKind{ViewRuns}, Action: ActRight,
		Help: "scroll the columns right, to the ones that did not fit"},
	{Keys: []Key{{Key: tcell.KeyEnter}}, Label: "⏎", Views: []ViewKind{ViewRuns, ViewTimeline, ViewDetail, ViewProperties},
		Action: ActOpen, Help: "drill in: run → timeline → span; link → its span; violation → its time"},
	{Keys: []Key{{Key: tcell.KeyEscape}}, Label: "esc", Views: allViews, Action: ActBack,
		Help: "clear the filter, else go back one step in the breadcrumb"},
	{Keys: []Key{runeKey('/')}, Label: "/", Views: []ViewKind{ViewRuns, ViewTimeline, ViewDetail}, Action: ActFilter,
		Help: "filter rows: text, or key=value on span attributes; a leading ! inverts"},
	{Keys: []Key{runeKey(':')}, Label: ":", Views: allViews, Action: ActCommand,
		Help: "command: seed, seeds, scenario, variant, set, compare, q (listed below)"},
	{Keys: []Key{runeKey('?')}, Label: "?", Views: allViews, Action: ActHelp, Help: "this help, built from the keymap"},
	{Keys: []Key{runeKey('q')}, Label: "q", Views: allViews, Action: ActQuit, Help: "quit"},
	{Keys: []Key{{Key: tcell.KeyCtrlC}}, Label: "^C", Views: allViews, Action: ActInterrupt,
		Help: "interrupt: quit as on SIGINT (simlab tui exits 130)"},
	{Keys: []Key{runeKey('s')}, Label: "s", Views: []ViewKind{ViewRuns}, Action: ActSort, Help: "sort by the next column"},
	{Keys: []Key{runeKey('S')}, Label: "S", Views: []ViewKind{ViewRuns}, Action: ActReverse, Help: "reverse the sort order"},
	{Keys: []Key{runeKey('m')}, Label: "m", Views: []ViewKind{ViewRuns}, Action: ActMark, Help: "mark the run to compare against"},
	{Keys: []Key{runeKey('c')}, Label: "c", Views: []ViewKind{ViewRuns}, Action: ActCompare,
		Help: "compare the marked run with the selected one, side by side"},
	{Keys: []Key{runeKey('e')}, Label: "e", Views: []ViewKind{ViewRuns, ViewTimeline}, Action: ActEdit,
		Help: "edit the run's scenario knobs in a form; its Run button simulates"},
	{Keys: []Key{runeKey('p')}, Label: "p", Views: []ViewKind{ViewRuns, ViewTimeline, ViewDetail}, Action: ActProperties,
		Help: "the run's property verdicts, stories and replay command"},
	{Keys: []Key{runeKey(' ')}, Label: "space", Views: []ViewKind{ViewTimeline}, Action: ActFold,
		Help: "fold or unfold the selected span's children"},
	{Keys: []Key{runeKey('d'), {Key: tcell.KeyPgDn}}, Label: "d/pgdn", Views: []ViewKind{ViewProperties, ViewHelp}, Action: ActPageDown,
		Help: "scroll the story (it ends with the replay command) or this help down half a pane"},
	{Keys: []Key{runeKey('u'), {Key: tcell.KeyPgUp}}, Label: "u/pgup", Views: []ViewKind{ViewProperties, ViewHelp}, Action: ActPageUp,
		Help: "scroll the story or this help up half a pane"},
	{Keys: []Key{runeKey(']')}, Label: "]", Views: []ViewKind{ViewTimeline}, Action: ActNextEvent,
		Help: "move the time cursor to the next event of the run's log"},
	{Keys: []Key{runeKey('[')}, Label: "[", Views: []ViewKind{ViewTimeline}, Action: ActPrevEvent,
		Help: "move the time cursor to the previous event"},
}

// lookupBinding finds the binding for a key press in a view.
func lookupBinding(v ViewKind, ev *tcell.EventKey) (Binding, bool) {
	for _, b := range Keymap {
		if !slices.Contains(b.Views, v) {
			continue
		}
		for _, k := range b.Keys {
			if k.Key != ev.Key() {
				continue
			}
			// Ctrl-letter keys arrive as their own tcell.Key; runes must
			// match exactly, without modifiers beyond shift.
			if k.Key != tcell.KeyRune || (k.Rune == ev.Rune() && ev.Modifiers()&(tcell.ModAlt|tcell.ModCtrl) == 0) {
				return b, true
			}
		}
	}
	return Binding{}, false
}

// hint is one footer item: a key label and the action's name.
type hint struct{ label, action string }

// footerItems are the hints the footer shows in view v, in keymap order.
func footerItems(v ViewKind) []hint {
	if v == ViewForm {
		// The form owns its keys (tview.Form); these are tview's, not ours.
		return []hint{{"tab", "next field"}, {"⏎", "choose/press"}, {"esc", "cancel"}}
	}
	var out []hint
	for _, b := range Keymap {
		if slices.Contains(b.Views, v) {
			out = append(out, hint{b.Label, string(b.Action)})
		}
	}
	return out
}

// helpLines renders the keymap for the help screen, one binding a line:
// key, action, views and what it does in columns, or, when that is wider
// than w cells (w > 0), the views after what the key does, so that the
// description starts early enough to be read on a narrow screen.
func helpLines(w int) []string {
	const row = "%-6s %-8s %-29s %s"
	wide := []string{fmt.Sprintf(row, "KEY", "ACTION", "VIEWS", "WHAT IT DOES")}
	narrow := []string{fmt.Sprintf("%-6s %-8s %s", "KEY", "ACTION", "WHAT IT DOES · VIEWS")}
	fits := true
	for _, b := range Keymap {
		views := make([]string, len(b.Views))
		for i, v := range b.Views {
			views[i] = string(v)
		}
		where := strings.Join(views, ",")
		if slices.Equal(b.Views, allViews) {
			where = "all"
		}
		l := fmt.Sprintf(row, b.Label, b.Action, where, b.Help)
		fits = fits && (w <= 0 || width(l) <= w)
		wide = append(wide, l)
		narrow = append(narrow, fmt.Sprintf("%-6s %-8s %s · %s", b.Label, b.Action, b.Help, where))
	}
	if fits {
		return wide
	}
	return narrow
}
