package main

import (
	"encoding/json"
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
		{[]string{"--sim-world", "world-postgres"}, "--sim-world"},
	} {
		_, _, err := runCLI(t, append([]string{"validate", "--engine-dir", t.TempDir()}, c.args...)...)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("validate %v: got %v, want exit 2 naming %q", c.args, err, c.want)
		}
	}
}

// simlab validate's simlab side (--cores= runs it alone, no Node) says which
// World it applied and sets the corruption counts beside each other; its
// JSON carries the World and the atomicity per row.
func TestValidateSimlabSideNamesItsWorld(t *testing.T) {
	args := []string{"validate", "--engine-dir", t.TempDir(), "--cores=", "--scenario", "durabench-256", "--branches", "16", "--seeds", "3", "--time-scale", "5"}
	out, _, err := runCLI(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"simlab: world-local's rules, world-local atomicity, the store model of world-vercel",
		"corruption, real beside simlab", "simlab (world-local) run_context", "simlab (world-local) runs_get"} {
		if !strings.Contains(out, want) {
			t.Errorf("validate printed no %q:\n%s", want, out)
		}
	}
	out, _, err = runCLI(t, append(args, "--json", "--sim-world", "scenario")...)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		SimWorld     string `json:"sim_world"`
		SimAtomicity string `json:"sim_atomicity"`
		Rows         []struct {
			World     string `json:"world"`
			Atomicity string `json:"atomicity"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("validate --json: %v\n%s", err, out)
	}
	if res.SimWorld != "world-vercel" || res.SimAtomicity != "call" || len(res.Rows) != 2 || res.Rows[0].World != "world-vercel" || res.Rows[0].Atomicity != "call" {
		t.Errorf("--sim-world scenario --json: %+v, want world-vercel's atomic World on both rows", res)
	}
}
