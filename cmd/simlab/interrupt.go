package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// onInterrupt returns a context that ends at the first SIGINT or SIGTERM,
// a function naming the signal that ended it (nil if none did), and a
// release to call when the work is done. Only the first signal is caught:
// the default action comes back at once, so a second Ctrl-C kills a
// command that is slow to stop. The signal is caught even when the process
// was started with it ignored (a background job): a Ctrl-C or kill -INT
// must stop the work, never leave it running to the end unseen.
func onInterrupt(parent context.Context) (ctx context.Context, got func() os.Signal, release func()) {
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var sig atomic.Value
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case s := <-ch:
			sig.Store(s)
			signal.Stop(ch)
			// The cause is what a context's user (the real engine's runner)
			// can name: "interrupted (SIGINT)".
			cancel(fmt.Errorf("interrupted (%v)", signalName(s)))
		case <-ctx.Done():
		}
	}()
	got = func() os.Signal {
		s, _ := sig.Load().(os.Signal)
		return s
	}
	release = func() {
		signal.Stop(ch)
		cancel(nil)
		<-done
	}
	return ctx, got, release
}

// interruptError is the error of a command stopped by a signal, after it
// printed what it had done: "interrupted by SIGINT: " and what, exit 128+n
// as a shell reports a process the signal killed (130 for Ctrl-C).
func interruptError(sig os.Signal, what string) error {
	code, by := 130, "interrupted"
	if s, ok := sig.(syscall.Signal); ok {
		code, by = 128+int(s), "interrupted by "+signalName(s)
	}
	return &exitError{code: code, err: fmt.Errorf("%s: %s", by, what)}
}

// signalName is a signal as a shell user knows it: SIGINT, SIGTERM.
func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}
