package main

import (
	"errors"
	"fmt"
	"os"
)

// exitCoder lets a command choose its exit status: 1 for a property violated,
// 2 for bad input, and so on.
type exitCoder interface{ ExitCode() int }

func main() {
	root := newRootCommand(os.Stdout, os.Stderr)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "simlab:", err)
		os.Exit(exitStatus(err))
	}
}

// exitStatus is the status a command's error exits with: the one an
// *exitError chose, else 2. Only simlab's own choice counts: a child's
// *exec.ExitError wrapped in the error has an ExitCode too, -1 for a child
// killed by a signal, which exited simlab with 255.
func exitStatus(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return 2
}
