package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/internal/bounded"
	"github.com/simlab/simlab/model/sweep"
)

// maxReportBytes bounds each file merge reads: a sweep shard's raw samples
// at the sweep's own limits, with room to spare.
const maxReportBytes = 1 << 30

// The kinds of JSON result simlab merge combines.
const (
	kindCheck = "check"
	kindSweep = "sweep"
)

// resultKind tells a check report from a sweep result by a key only that
// kind has, so merge needs no flag and a file of the wrong kind is named.
func resultKind(path string, data []byte) (string, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return "", fmt.Errorf("%s: %v; want the output of simlab check --json or simlab sweep --json", path, cmp.Or(jsonReason(err), err))
	}
	_, violations := keys["violations"]
	_, base := keys["runs_get_base_p50_ms"]
	switch {
	case violations && !base:
		if _, ok := keys["declared"]; !ok {
			return "", fmt.Errorf("%s: a check report without \"declared\" (made by an older simlab): coverage_missing cannot be recomputed", path)
		}
		return kindCheck, nil
	case base && !violations:
		return kindSweep, nil
	}
	return "", fmt.Errorf("%s: neither a check report (\"violations\") nor a sweep result (\"runs_get_base_p50_ms\")", path)
}

// decodeStrict decodes one JSON document, refusing fields the type does
// not have: a typo'd or foreign file must not merge as zeros.
func decodeStrict(path string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if r := jsonReason(err); r != nil {
			err = r
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func newMergeCommand() *cobra.Command {
	var chart string
	cmd := &cobra.Command{
		Use:   "merge FILE...",
		Short: "Combine the --json results of sharded check or sweep runs into one report",
		Long: `Read the --json output of every shard of one simlab check or one simlab sweep
(the kind is detected) and print, as JSON, the report the same command prints
without --shard, byte for byte. Check reports: seeds, violations and coverage
sum, each property's first counterexample is the lowest seed's, and
coverage_missing is recomputed from declared. Sweep results: the rows are
recomputed from the shards' raw samples (percentiles cannot be merged from
percentiles), so every shard must be given exactly once.
Exit 1 when a merged check report fails, as simlab check does; 2 on bad input.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind := ""
			var checks []*check.Report
			var sweeps []*sweep.Result
			for _, path := range args {
				data, err := bounded.ReadFile(path, maxReportBytes, "a check report or sweep result")
				var tl *bounded.TooLargeError
				if errors.As(err, &tl) {
					return badInput(fmt.Errorf("%s: %w", path, err))
				} else if err != nil {
					return badInput(userPathError(path, err))
				}
				k, err := resultKind(path, data)
				if err != nil {
					return badInput(err)
				}
				if kind != "" && k != kind {
					return badInput(fmt.Errorf("%s is a %s result, %s a %s result: merge one kind at a time", path, k, args[0], kind))
				}
				kind = k
				if k == kindCheck {
					var r check.Report
					if err := decodeStrict(path, data, &r); err != nil {
						return badInput(err)
					}
					checks = append(checks, &r)
				} else {
					var r sweep.Result
					if err := decodeStrict(path, data, &r); err != nil {
						return badInput(err)
					}
					sweeps = append(sweeps, &r)
				}
			}
			if kind == kindSweep {
				res, err := sweep.Merge(sweeps)
				if err != nil {
					return badInput(err)
				}
				return writeSweep(cmd.OutOrStdout(), res, true, chart)
			}
			if chart != "" {
				return badInput(fmt.Errorf("--chart draws sweep results; these are check reports"))
			}
			rep, err := check.MergeReports(checks)
			if err != nil {
				return badInput(err)
			}
			if err := writeJSON(cmd.OutOrStdout(), rep); err != nil {
				return err
			}
			if rep.Failed() {
				return &exitError{code: 1, err: fmt.Errorf("merged check failed")}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&chart, "chart", "", "for sweep results: also write the chart of the merged sweep to FILE (.svg or .png)")
	return cmd
}
