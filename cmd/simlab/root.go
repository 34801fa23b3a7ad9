package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is stamped by the release build (-ldflags "-X main.version=...");
// a development build reports the module version Go recorded, or "devel".
var version = ""

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "simlab",
		Short: "A deterministic simulation and observability lab for queued step dispatch",
		Long: `simlab models how a durable-workflow engine dispatches queued step executions
(producers, version-skewed consumers, a redelivering queue, world stores) in a
seeded discrete-event simulator on virtual time: one seed, one history.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newVersionCommand(), newRunCommand(), newScenariosCommand(), newVariantsCommand(),
		newCheckCommand(), newReplayCommand(), newPropertiesCommand(), newSweepCommand(), newMergeCommand())
	root.AddCommand(newTUICommand())
	root.AddCommand(newValidateCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print simlab's version and the Go version it was built with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, goVersion := version, "unknown"
			if info, ok := debug.ReadBuildInfo(); ok {
				goVersion = info.GoVersion
				if v == "" {
					v = info.Main.Version
				}
			}
			if v == "" || v == "(devel)" {
				v = "devel"
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "simlab %s (%s)\n", v, goVersion)
			return err
		},
	}
}
