package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/traces"
)

// traceFlags are run's flags for OpenTelemetry output.
type traceFlags struct {
	otlp     string
	out      string
	epoch    string
	maxSpans int
	timeout  time.Duration
}

func (f *traceFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.otlp, "otlp", "", "export the run's spans over OTLP/HTTP to this endpoint, e.g. http://127.0.0.1:4318")
	cmd.Flags().StringVar(&f.out, "trace-out", "", "write the run's spans to this OTLP JSON Lines file (what Jaeger UI upload and otel-tui read); - is stdout. A FIFO, device or symlink is written through, never replaced; a read-only file is refused")
	cmd.Flags().StringVar(&f.epoch, "epoch", "", `wall-clock instant of virtual time 0: RFC 3339, or "now" so a backend's default search window finds the traces (default 2026-01-01T00:00:00Z)`)
	cmd.Flags().IntVar(&f.maxSpans, "max-spans", 0, "keep at most this many spans per run, always keeping those that matter to a violation (0: all)")
	cmd.Flags().DurationVar(&f.timeout, "otlp-timeout", traces.DefaultExportTimeout, "give up on the OTLP endpoint after this long per request")
}

func (f *traceFlags) wanted() bool { return f.otlp != "" || f.out != "" }

// toStdout says the trace file is stdout (--trace-out -), where nothing else
// may be printed.
func (f *traceFlags) toStdout() bool { return f.out == "-" }

func (f *traceFlags) outName() string {
	if f.toStdout() {
		return "stdout"
	}
	return f.out
}

// check validates the flags before anything runs: each value, and that
// none is given for nothing (a trace's shape without a trace to shape).
func (f *traceFlags) check(cmd *cobra.Command) error {
	if cmd.Flags().Changed("trace-out") && f.out == "" {
		return badInput(fmt.Errorf(`--trace-out "": name a file, for example --trace-out run.jsonl (or - for stdout)`))
	}
	if f.timeout <= 0 {
		return badInput(fmt.Errorf("--otlp-timeout %v: want a positive duration, for example --otlp-timeout 5s", f.timeout))
	}
	if _, err := traces.ParseEpoch(f.epoch, nil); err != nil {
		return badInput(err)
	}
	if f.maxSpans < 0 {
		return badInput(fmt.Errorf("--max-spans = %d: want 0 (all) or more", f.maxSpans))
	}
	if f.otlp != "" {
		if _, err := traces.EndpointURL(f.otlp); err != nil {
			return badInput(err)
		}
	}
	if !f.wanted() {
		for _, n := range []string{"epoch", "max-spans", "otlp-timeout"} {
			if cmd.Flags().Changed(n) {
				return badInput(fmt.Errorf("--%s shapes the run's trace: give --trace-out or --otlp too, or drop it", n))
			}
		}
	}
	return nil
}

// emit writes the trace file first, then exports: a trace that could not be
// sent is still on disk. It tells on log (stderr) where the traces went and
// their ids, so a person can open them in Jaeger.
func (f *traceFlags) emit(h *model.History, stdout, log io.Writer) error {
	epoch, _ := traces.ParseEpoch(f.epoch, nil)
	opts := traces.Options{Epoch: epoch, MaxSpans: f.maxSpans}
	spans, err := traces.Build(h, opts)
	if err != nil {
		return err
	}
	ids := make([]string, len(h.Runs))
	for i := range h.Runs {
		ids[i] = fmt.Sprintf("%s trace id %s", model.RunName(h.Runs[i].ID), traces.TraceID(h, opts, i))
	}
	return f.send(spans, ids, stdout, log)
}

// emitFlow is emit for one run of a workflow program (simlab replays).
func (f *traceFlags) emitFlow(run traces.FlowRun, stdout, log io.Writer) error {
	epoch, _ := traces.ParseEpoch(f.epoch, nil)
	spans, tid, err := traces.BuildFlow(run, traces.Options{Epoch: epoch})
	if err != nil {
		return err
	}
	return f.send(spans, []string{fmt.Sprintf("%s trace id %s", traces.FlowRunName(run.Seed), tid)}, stdout, log)
}

// send writes the spans to the trace file, then exports them, and tells
// each run's trace id (ids, one line each).
func (f *traceFlags) send(spans []sdktrace.ReadOnlySpan, ids []string, stdout, log io.Writer) error {
	if f.out != "" {
		if err := writeOutput(f.out, stdout, func(w io.Writer) error { return traces.WriteJSONL(w, spans) }); err != nil {
			return badInput(fmt.Errorf("--trace-out %w", err))
		}
		fmt.Fprintf(log, "traces: %d spans written to %s\n", len(spans), f.outName())
	}
	if f.otlp != "" {
		if err := traces.ExportOTLP(context.Background(), f.otlp, spans, traces.WithTimeout(f.timeout)); err != nil {
			var ee *traces.ExportError
			if errors.As(err, &ee) {
				switch {
				case ee.Timeout:
					err = fmt.Errorf("%w: is a collector's OTLP/HTTP port there? A slow one gets longer with --otlp-timeout 30s", err)
				case ee.Refused:
					err = fmt.Errorf("%w: start a collector there (scripts/jaeger start) or point --otlp at one", err)
				}
			}
			if f.out != "" {
				err = fmt.Errorf("%w (the trace file %s was written)", err, f.outName())
			}
			return badInput(err)
		}
		fmt.Fprintf(log, "traces: %d spans exported to %s\n", len(spans), f.otlp)
	}
	for _, id := range ids {
		fmt.Fprintf(log, "traces: %s\n", id)
	}
	return nil
}
