package main

import (
	"errors"
	"strings"
	"testing"
)

// simlab validate refuses bad input before it installs or runs anything:
// exit 2, and the message names what was wrong.
func TestValidateRefusesBadInputUpFront(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--branches", "4,100000"}, "1..512"},
		{[]string{"--set", "faults.misdeliver=0.1"}, "faults.misdeliver"},
		{[]string{"--variant", "pre-fix-fence"}, "pre-fix-fence"},
		{[]string{"--cores", "4.0.0"}, "5.0.0-beta.52"},
		{[]string{"--repetitions", "0"}, "--repetitions"},
		{[]string{"--time-scale", "1000"}, "--time-scale"},
	} {
		_, _, err := runCLI(t, append([]string{"validate", "--engine-dir", t.TempDir()}, c.args...)...)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("validate %v: got %v, want exit 2 naming %q", c.args, err, c.want)
		}
	}
}
