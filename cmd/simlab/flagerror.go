package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
