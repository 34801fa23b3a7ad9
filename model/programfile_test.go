package model

import (
	"strings"
	"testing"
)

func TestParseProgram(t *testing.T) {
	good := "program:\n  - race: [{step: work}, {sleep: 300ms}]\n    as: won\n  - if: won\n    then: [{step: extra}]\n  - step: final\n"
	prog, err := ParseProgram([]byte(good))
	if err != nil || len(prog) != 3 || prog[1].If != "won" || prog[0].Race[1].Sleep.Milliseconds() != 300 {
		t.Fatalf("%q: %v, %+v", good, err, prog)
	}
	for _, c := range []struct{ file, want string }{
		{"", "empty"},
		{"program: []\n", "want a list of statements"},
		{"programme:\n  - step: a\n", "programme"},
		{"program:\n  - step: a\n  - if: nowhere\n    then: [{step: b}]\n", "line 3"},
		{"program:\n  - step: a\n    sleep: nonsense\n", "sleep"},
	} {
		_, err := ParseProgram([]byte(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one naming %q", c.file, err, c.want)
		}
	}
}
