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
	ctx, cancel := context.WithCancel(parent)
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
			cancel()
		case <-ctx.Done():
		}
	}()
	got = func() os.Signal {
		s, _ := sig.Load().(os.Signal)
		return s
	}
	release = func() {
		signal.Stop(ch)
		cancel()
		<-done
	}
	return ctx, got, release
}

// interruptError is the error of a command stopped by a signal: exit
// 128+n, as a shell reports a process the signal killed (130 for Ctrl-C),
// though what was done is printed first.
func interruptError(sig os.Signal, err error) error {
	code := 130
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
	}
	if sig != nil {
		err = fmt.Errorf("%w (%v)", err, sig)
	}
	return &exitError{code: code, err: err}
}
