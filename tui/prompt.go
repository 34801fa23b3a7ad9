package tui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

type promptMode int

const (
	promptClosed promptMode = iota
	promptFilter
	promptCommand
)

// prompt is the line above the footer: it shows the last message (an error
// in red), or, while `/` or `:` is being typed, the input field. Commands
// keep a history, walked with ↑ and ↓ as in k9s.
type prompt struct {
	*tview.Box
	input   *tview.InputField
	mode    promptMode
	message string
	isError bool
	// idle is shown, dim, when there is no message: the view's active
	// filter, which the breadcrumb may have to cut.
	idle    string
	history []string
	histPos int
	// onChange is called as a filter is typed; onDone when Enter or Esc ends
	// the input (key says which).
	onChange func(mode promptMode, text string)
	onDone   func(mode promptMode, text string, key tcell.Key)
}

func newPrompt() *prompt {
	p := &prompt{Box: tview.NewBox(), input: tview.NewInputField()}
	p.input.SetFieldBackgroundColor(tcell.ColorBlack).SetFieldTextColor(tcell.ColorWhite)
	p.input.SetLabelColor(tcell.ColorYellow)
	p.input.SetChangedFunc(func(text string) {
		if p.mode != promptClosed && p.onChange != nil {
			p.onChange(p.mode, text)
		}
	})
	p.input.SetDoneFunc(func(key tcell.Key) {
		mode, text := p.mode, p.input.GetText()
		if key != tcell.KeyEnter && key != tcell.KeyEscape {
			return // Tab and Backtab do not end the prompt
		}
		if mode == promptCommand && key == tcell.KeyEnter && text != "" {
			p.history = append(p.history, text)
		}
		p.mode = promptClosed
		if p.onDone != nil {
			p.onDone(mode, text, key)
		}
	})
	p.input.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		if p.mode != promptCommand || len(p.history) == 0 {
			return ev
		}
		switch ev.Key() {
		case tcell.KeyUp:
			p.histPos = max(0, p.histPos-1)
		case tcell.KeyDown:
			p.histPos = min(len(p.history), p.histPos+1)
		default:
			return ev
		}
		if p.histPos < len(p.history) {
			p.input.SetText(p.history[p.histPos])
		} else {
			p.input.SetText("")
		}
		return nil
	})
	return p
}

// open starts typing a filter or a command, with text already in the field.
func (p *prompt) open(mode promptMode, text string) {
	p.mode = mode
	p.message, p.isError = "", false
	p.histPos = len(p.history)
	label := "/"
	if mode == promptCommand {
		label = ":"
	}
	p.input.SetLabel(label)
	p.input.SetText(text)
}

func (p *prompt) active() bool { return p.mode != promptClosed }

func (p *prompt) say(msg string, isError bool) { p.message, p.isError = msg, isError }

func (p *prompt) Draw(screen tcell.Screen) {
	p.DrawForSubclass(screen, p)
	x, y, w, h := p.GetInnerRect()
	if p.active() {
		p.input.SetRect(x, y, w, h)
		p.input.Draw(screen)
		return
	}
	style := styleDim
	if p.isError {
		style = styleError
	}
	msg := p.message
	if msg == "" {
		msg = p.idle
	}
	// A long message wraps over the prompt's lines (see lines) rather than
	// losing its end, where an error's reason is.
	parts := wrapHanging(msg, w-1)
	for i := 0; i < len(parts) && i < h; i++ {
		part := parts[i]
		if i == h-1 && i < len(parts)-1 {
			part += " …" // more than the lines hold: say so
		}
		put(screen, x+1, y+i, w-1, fitLeft(part, w-1), style)
	}
}

// lines is how many screen lines the prompt wants at width w: one, or up to
// three for a message that long.
func (p *prompt) lines(w int) int {
	if p.active() || p.message == "" {
		return 1
	}
	return min(3, max(1, len(wrapHanging(p.message, w-2))))
}

func (p *prompt) InputHandler() func(*tcell.EventKey, func(tview.Primitive)) {
	return p.input.InputHandler()
}

func (p *prompt) Focus(delegate func(tview.Primitive)) { delegate(p.input) }

func (p *prompt) HasFocus() bool { return p.input.HasFocus() }
