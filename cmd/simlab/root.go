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
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newVersionCommand(), newRunCommand(), newScenariosCommand(), newVariantsCommand(),
		newCheckCommand(), newReplayCommand(), newReplaysCommand(), newPropertiesCommand(), newSweepCommand(), newMergeCommand())
	root.AddCommand(newTUICommand())
	root.AddCommand(newValidateCommand(), newReleasesCommand())
	root.AddCommand(newReproduceCommand(), newCalibrateCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print simlab's module version, VCS revision and the Go version it was built with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info, _ := debug.ReadBuildInfo()
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine(info, version))
			return err
		},
	}
}

// versionLine is `simlab version`: the module version (or the one stamped
// at release), the VCS revision and time Go recorded when it built from a
// checkout (marked "modified" for uncommitted changes), and the Go version.
// `go run` and `go test` record no revision; a build says so rather than
// printing nothing.
func versionLine(info *debug.BuildInfo, stamped string) string {
	v, goVersion := stamped, "unknown"
	settings := map[string]string{}
	if info != nil {
		goVersion = info.GoVersion
		if v == "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	rev := "revision unknown (built without VCS information, e.g. by go run)"
	if r := settings["vcs.revision"]; r != "" {
		rev = "revision " + r
		if t := settings["vcs.time"]; t != "" {
			rev += " (" + t + ")"
		}
		if settings["vcs.modified"] == "true" {
			rev += " modified"
		}
	}
	return fmt.Sprintf("simlab %s · %s · %s", v, rev, goVersion)
}
