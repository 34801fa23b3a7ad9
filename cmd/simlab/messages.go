package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/simlab/simlab/properties"
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

// jsonReason says why a file is not the JSON it should be in a reader's
// terms (where it breaks, which field has the wrong type), or returns nil
// when err is no JSON decoding error.
func jsonReason(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("not JSON (broken at byte %d)", se.Offset)
	case errors.As(err, &te) && te.Field != "":
		return fmt.Errorf("field %s is a JSON %s, not the expected type", te.Field, te.Value)
	case errors.As(err, &te):
		return fmt.Errorf("a JSON %s, not an object", te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the JSON ends early (a cut-off file?)")
	}
	return nil
}

// loadSchedule is properties.LoadSchedule with errors a user can act on.
func loadSchedule(path string) (properties.Schedule, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return properties.Schedule{}, fmt.Errorf("schedule %s: no such file; simlab check prints the path of each schedule it saves (by default in %s)",
			path, cmp.Or(func() string { d, _ := defaultScheduleDir(); return d }(), "the user's cache"))
	}
	s, err := properties.LoadSchedule(path)
	if r := jsonReason(err); r != nil {
		return s, fmt.Errorf("schedule %s: %w; want a schedule file saved by simlab check", path, r)
	}
	return s, err
}
