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
		var ec exitCoder
		if errors.As(err, &ec) {
			os.Exit(ec.ExitCode())
		}
		os.Exit(2)
	}
}
