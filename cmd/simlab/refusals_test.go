package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Inputs a newcomer met that ran something else, or said too little
// (issue 36): each is refused with exit 2 and a message naming what was
// wrong.
func TestInputsANewcomerMetAreRefusedClearly(t *testing.T) {
	dir := t.TempDir()
	empty := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--scenario", empty("empty.yaml")}, "holds no scenario"},
		{[]string{"replay", empty("empty.json")}, "the file is empty"},
		{[]string{"check", "--scenario", "fanout", "--seeds", "2", "--until-stable", "0"}, "--until-stable = 0"},
		{[]string{"merge", filepath.Join(dir, "missing.json")}, "missing.json: no such file"},
		{[]string{"calibrate", "--write", filepath.Join(dir, "no", "such", "dir", "cal.yaml"), "--engine-dir", dir}, "--write"},
		{[]string{"calibrate", "--write", dir, "--engine-dir", dir}, "is a directory"},
		{[]string{"releases", "add", "--engine-dir", filepath.Join("..", "..", "realengine")}, "--add-world-local VERSION"},
	} {
		_, _, err := runCLI(t, c.args...)
		if exitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want exit 2 naming %q", c.args, exitCode(err), err, c.want)
		}
	}
}
