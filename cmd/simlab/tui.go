package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/tui"
)

// tuiLogPath is where the TUI logs unless --log says otherwise: the XDG
// state directory, since a log is state that is worth keeping but not
// configuration and not cache.
func tuiLogPath() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return filepath.Join(os.TempDir(), "simlab-tui.log")
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "simlab", "tui.log")
}

// maxTUISeeds bounds the seeds a session simulates at once: each becomes
// rows the TUI holds with every span.
const maxTUISeeds = 10000

// parseTUISeeds reads the repeatable --seed, each in the one seed grammar
// (N, A..B or a list), at most maxTUISeeds seeds in all.
func parseTUISeeds(args []string) ([]uint64, error) {
	if len(args) == 0 {
		return append([]uint64(nil), tui.DefaultSeeds...), nil
	}
	lists := make([]seeds.List, len(args))
	var total uint64
	for i, a := range args {
		l, err := seeds.ParseList(a)
		if err != nil {
			return nil, fmt.Errorf("--seed %w; for example --seed 7 or --seed 1..8", err)
		}
		lists[i] = l
		if total += l.Len(); total > maxTUISeeds || l.Len() > maxTUISeeds {
			return nil, fmt.Errorf("--seed %s: at most %d seeds in all (the TUI simulates each); for example --seed 1..8", strings.Join(args, " --seed "), maxTUISeeds)
		}
	}
	var out []uint64
	for _, l := range lists {
		out = slices.AppendSeq(out, l.Seeds(seeds.Shard{}))
	}
	return out, nil
}

// haveTerminal says why the TUI could not draw: it draws on the process's
// controlling terminal (tcell opens /dev/tty), which a cron job, a CI step
// or a detached process has none of. Said before anything is simulated,
// in words, rather than tcell's "open /dev/tty: no such device".
func haveTerminal() error {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("simlab tui needs a terminal to draw on, and this process has none (%v): run it in a terminal or a tmux pane; simlab run and simlab check print the same runs and verdicts without one",
			userPathError("/dev/tty", err))
	}
	return tty.Close()
}

// openTUILog opens the log file, creating its directory. The screen belongs
// to the TUI, so nothing may ever be logged to it.
func openTUILog(path string) (*slog.Logger, io.Closer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, fmt.Errorf("log file %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("log file: %w", err)
	}
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})), f, nil
}

func newTUICommand() *cobra.Command {
	var sf scenarioFlags
	var seeds []string
	var tracePath, logPath string
	cmd := &cobra.Command{
		Use:   "tui",
		Short: "Explore runs in a terminal UI: runs, timelines, spans, verdicts, comparisons",
		Long: `Open the terminal lab. Without arguments it simulates the fanout scenario for
seeds 1–8; --scenario, --seed, --variant and --set choose others, as in run.
--trace FILE.jsonl opens an exported trace file instead (one row per trace).
Press ? inside for the keys. Logs go to --log (default
$XDG_STATE_HOME/simlab/tui.log), never to the screen. Bad input exits 2
before the screen opens; q quits (exit 0), Ctrl-C interrupts (exit 130).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := parseTUISeeds(seeds)
			if err != nil {
				return badInput(err)
			}
			cfg := tui.Config{Scenario: sf.spec.Scenario, Sets: sf.spec.Sets, Variants: sf.spec.Variants, Seeds: list}
			var runs []*tui.Run
			origin := cfg.Scenario
			if tracePath != "" {
				if runs, err = tui.LoadTrace(tracePath); err != nil {
					return badInput(err)
				}
				origin = tracePath
				// Later :seed commands simulate the file's scenario when it
				// names a built-in one and --scenario did not choose.
				if !cmd.Flags().Changed("scenario") && runs[0].Scenario != "" {
					if c := (tui.Config{Scenario: runs[0].Scenario, Variants: runs[0].Variants, Seeds: list}); c.Check() == nil {
						cfg = c
					}
				}
			}
			if err := cfg.Check(); err != nil {
				return badInput(err)
			}
			if err := haveTerminal(); err != nil {
				return badInput(err)
			}
			if logPath == "" {
				logPath = tuiLogPath()
			}
			log, closer, err := openTUILog(logPath)
			if err != nil {
				return badInput(err)
			}
			defer closer.Close()
			// Ctrl-C before the screen opens stops the simulation; after,
			// Ctrl-C is a key, and SIGINT or SIGTERM from outside end the
			// TUI the way q does, so the terminal is restored (tcell
			// leaves it raw, on the alternate screen, if the process dies).
			ctx, interrupted, release := onInterrupt(cmd.Context())
			defer release()
			notice, warn := "", false
			if tracePath == "" {
				bar := progress(cmd.ErrOrStderr(), "simulating seeds")
				runs, err = tui.SimulateWith(cfg, tui.SimOptions{
					Stop: func() bool { return ctx.Err() != nil },
					Progress: func(done, total int) {
						if bar != nil {
							bar(done, total)
						}
					},
				})
				var limit *tui.SpanLimitError
				switch {
				case errors.Is(err, tui.ErrStopped):
					return interruptError(interrupted(), "the screen did not open")
				case errors.As(err, &limit) && len(runs) > 0:
					// The seeds done are shown; the message says why the
					// rest are not.
					notice, warn = limit.Error(), true
				case err != nil:
					return badInput(err)
				}
			}
			app, err := tui.New(tui.Options{Config: cfg, Runs: runs, Origin: origin, Log: log, Notice: notice, Warn: warn,
				// The terminal is raw, so Ctrl-C is a key: raise the
				// signal it stands for, and end as on any interrupt.
				OnInterrupt: func() { _ = syscall.Kill(os.Getpid(), syscall.SIGINT) }})
			if err != nil {
				return err
			}
			go func() {
				<-ctx.Done()
				if interrupted() != nil {
					app.Stop()
				}
			}()
			err = app.Run()
			if s := interrupted(); s != nil {
				return interruptError(s, "the TUI stopped and restored the terminal")
			}
			return err
		},
	}
	sf.register(cmd)
	cmd.Flags().StringArrayVar(&seeds, "seed", nil, "seeds to simulate: N, A..B or a list such as 1..8,42 (repeatable; default 1..8)")
	cmd.Flags().StringVar(&tracePath, "trace", "", "open an OTLP JSON Lines trace file instead of simulating")
	cmd.Flags().StringVar(&logPath, "log", "", "log file (default $XDG_STATE_HOME/simlab/tui.log)")
	return cmd
}
