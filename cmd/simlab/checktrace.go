package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/simlab/simlab/properties/spancheck"
	"github.com/simlab/simlab/traces"
)

// judgeFlags are check's flags for judging recorded spans instead of
// simulating: a trace file, or a Jaeger search.
type judgeFlags struct {
	file, jaeger, service, start, end string
	since                             time.Duration
	maxTraces                         int
	timeout                           time.Duration
}

func (f *judgeFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.file, "trace", "", "judge the spans of an OTLP JSON Lines file (simlab's --trace-out, or a real engine's; - is stdin) instead of simulating")
	cmd.Flags().StringVar(&f.jaeger, "jaeger", "", "judge the traces a Jaeger query service (http://host:16686) holds for --service in the time window")
	cmd.Flags().StringVar(&f.service, "service", "", "with --jaeger: the service whose traces to read")
	cmd.Flags().DurationVar(&f.since, "since", time.Hour, "with --jaeger: the window is the last this long (ignored with --start)")
	cmd.Flags().StringVar(&f.start, "start", "", "with --jaeger: window start, RFC3339")
	cmd.Flags().StringVar(&f.end, "end", "", "with --jaeger: window end, RFC3339 (default: now)")
	cmd.Flags().IntVar(&f.maxTraces, "max-traces", 100, "with --jaeger: at most this many traces")
	cmd.Flags().DurationVar(&f.timeout, "jaeger-timeout", 10*time.Second, "with --jaeger: bound on the query")
}

func (f *judgeFlags) set() bool { return f.file != "" || f.jaeger != "" }

// refuse names a flag given that cannot apply: a simulation's flag when
// spans are judged, a Jaeger query's flag without --jaeger, or a bound that
// means nothing. One silently ignored would make the verdict not the one
// asked for.
func (f *judgeFlags) refuse(cmd *cobra.Command) error {
	changed := func(names ...string) string {
		for _, n := range names {
			if cmd.Flags().Changed(n) {
				return n
			}
		}
		return ""
	}
	if f.jaeger == "" {
		if n := changed("service", "since", "start", "end", "max-traces", "jaeger-timeout"); n != "" {
			return fmt.Errorf("--%s applies when judging what a Jaeger holds (--jaeger URL): give --jaeger too, or drop it", n)
		}
	}
	if f.set() {
		by := "--trace"
		if f.file == "" {
			by = "--jaeger"
		}
		if n := changed("scenario", "set", "variant", "seeds", "seed-range", "shard", "jobs", "schedules",
			"diff", "base-set", "base-variant", "baseline", "write-baseline", "until-stable", "reproduce", "engine-dir", "junit", "report"); n != "" {
			return fmt.Errorf("%s judges recorded spans; --%s is for a simulation and does not apply: drop it", by, n)
		}
	}
	if f.jaeger != "" {
		switch {
		case f.maxTraces < 1:
			return fmt.Errorf("--max-traces %d: want at least 1", f.maxTraces)
		case f.timeout <= 0:
			return fmt.Errorf("--jaeger-timeout %v: want a positive duration, e.g. 10s", f.timeout)
		case f.since <= 0 && f.start == "":
			return fmt.Errorf("--since %v: want a positive duration, e.g. 1h", f.since)
		}
	}
	return nil
}

// window is the Jaeger search window: --start..--end, or the last --since.
func (f *judgeFlags) window(now time.Time) (time.Time, time.Time, error) {
	end := now
	if f.end != "" {
		t, err := time.Parse(time.RFC3339, f.end)
		if err != nil {
			return time.Time{}, time.Time{}, fmt.Errorf("--end = %q: want RFC3339, e.g. 2026-01-01T00:00:00Z", f.end)
		}
		end = t
	}
	if f.start == "" {
		return end.Add(-f.since), end, nil
	}
	start, err := time.Parse(time.RFC3339, f.start)
	if err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("--start = %q: want RFC3339, e.g. 2026-01-01T00:00:00Z", f.start)
	}
	return start, end, nil
}

// checkTrace judges the spans of a file or a Jaeger search and prints, per
// property, its verdict or why spans could not judge it. Exit 1 on a
// violation, 0 when every judged property holds, 2 on bad input.
func checkTrace(cmd *cobra.Command, f *judgeFlags, asJSON bool) error {
	var spans []traces.Span
	var source string
	switch {
	case f.file != "" && f.jaeger != "":
		return badInput(errors.New("--trace and --jaeger: give one"))
	case f.file == "-":
		// A pipe: curl ... | simlab check --trace -
		var err error
		if spans, err = traces.ReadJSONL(cmd.InOrStdin()); err != nil {
			return badInput(fmt.Errorf("--trace - (stdin): %w", err))
		}
		source = "stdin"
	case f.file != "":
		r, err := os.Open(f.file)
		if err != nil {
			return badInput(fmt.Errorf("--trace: %w", err))
		}
		defer r.Close()
		spans, err = traces.ReadJSONL(r)
		if err != nil {
			return badInput(fmt.Errorf("--trace %s: %w", f.file, err))
		}
		source = f.file
	default:
		start, end, err := f.window(time.Now())
		if err != nil {
			return badInput(err)
		}
		q := spancheck.JaegerQuery{URL: f.jaeger, Service: f.service, Start: start, End: end, MaxTraces: f.maxTraces}
		if _, err := q.SearchURL(); err != nil {
			return badInput(err)
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), f.timeout)
		defer cancel()
		spans, err = spancheck.FetchJaeger(ctx, http.DefaultClient, q)
		if err != nil {
			return badInput(err)
		}
		source = fmt.Sprintf("jaeger %s service %s %s..%s", f.jaeger, f.service, start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339))
	}
	if len(spans) == 0 {
		return badInput(fmt.Errorf("%s: no spans to judge", source))
	}
	// A span read twice is one span: judged twice it would count as two
	// step_created, two terminal events, one attempt too many.
	spans, dups, err := traces.Dedup(spans)
	if err != nil {
		return badInput(fmt.Errorf("%s: %w", source, err))
	}
	rep := spancheck.Check(spans)
	rep.Duplicates = dups
	out := cmd.OutOrStdout()
	if asJSON {
		if err := writeJSON(out, rep); err != nil {
			return err
		}
	} else {
		printTraceReport(out, source, rep)
	}
	if rep.Failed() {
		return &exitError{code: 1, err: fmt.Errorf("check failed: a property is violated in the spans of %s", source)}
	}
	return nil
}

func printTraceReport(w io.Writer, source string, rep *spancheck.Report) {
	fmt.Fprintf(w, "spans of %s · %d spans · runs %s\n", source, rep.Spans, strings.Join(rep.Runs, ", "))
	if rep.Duplicates > 0 {
		fmt.Fprintf(w, "%d duplicated spans ignored (the same trace and span id, the same content, read again)\n", rep.Duplicates)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROPERTY\tVERDICT\tFROM SPANS")
	for _, v := range rep.Verdicts {
		verdict := "holds"
		switch {
		case !v.Judged:
			verdict = "not judged"
		case len(v.Violations) > 0:
			verdict = fmt.Sprintf("VIOLATED (%d)", len(v.Violations))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Property, verdict, v.Why)
	}
	tw.Flush()
	for _, v := range rep.Verdicts {
		for i, x := range v.Violations {
			if i == 3 {
				fmt.Fprintf(w, "  … and %d more\n", len(v.Violations)-3)
				break
			}
			fmt.Fprintf(w, "\n%s violated in %s: %s\n", v.Property, x.Run, x.Message)
			for _, e := range x.Evidence {
				fmt.Fprintf(w, "  %s\n", e)
			}
		}
	}
}
