package main

import (
	"io"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress returns a callback that draws a progress bar on w when w is a
// terminal, and nil otherwise (a pipe or a CI log gets no bar). The callback
// may be called from several goroutines; the bar appears on the first call.
func progress(w io.Writer, what string) func(done, total int) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	var mu sync.Mutex
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(f),
				progressbar.OptionSetDescription(what), progressbar.OptionShowCount(),
				progressbar.OptionClearOnFinish())
		}
		// Workers may report out of order; the bar never goes back.
		_ = bar.Set(max(done, int(bar.State().CurrentNum)))
	}
}
