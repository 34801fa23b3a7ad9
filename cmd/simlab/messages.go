package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/traces"
)

// flagError rewrites a flag value the parser refused into the user's terms:
// which flag, what was given, what it wants and an example to type, without
// the Go parser's text (strconv.ParseUint: parsing "-1": invalid syntax).
func flagError(_ *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) {
		return badInput(err)
	}
	f := iv.GetFlag()
	want, example := "", f.DefValue
	switch f.Value.Type() {
	case "uint64", "uint":
		want = fmt.Sprintf("a whole number from 0 to %d", uint64(math.MaxUint64))
	case "int":
		want = "a whole number"
	case "intSlice":
		want, example = "whole numbers separated by commas", "16,64"
	case "duration":
		want, example = "a duration with a unit, such as 500ms, 5s or 1m", "5s"
	case "bool":
		want, example = "true or false", "true"
	default:
		return badInput(fmt.Errorf("--%s %q: %v", f.Name, iv.GetValue(), iv.Unwrap()))
	}
	if example == "" || example == "[]" {
		example = "1"
	}
	return badInput(fmt.Errorf("--%s %q: want %s, for example --%s %s", f.Name, iv.GetValue(), want, f.Name, example))
}

// jsonReason is traces.JSONProblem: why a file is not the JSON it should
// be, or nil when err is no JSON decoding error.
var jsonReason = traces.JSONProblem

// loadSchedule is check.LoadSchedule with errors a user can act on.
func loadSchedule(path string) (check.Schedule, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return check.Schedule{}, fmt.Errorf("schedule %s: no such file; simlab check prints the path of each schedule it saves (by default in %s)",
			path, cmp.Or(func() string { d, _ := defaultScheduleDir(); return d }(), "the user's cache"))
	}
	s, err := check.LoadSchedule(path)
	if r := jsonReason(err); r != nil {
		return s, fmt.Errorf("schedule %s: %w; want a schedule file saved by simlab check", path, r)
	}
	return s, err
}
