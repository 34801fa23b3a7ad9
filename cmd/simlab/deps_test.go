package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The simlab binary links no test code: the rapid chooser and the scenario
// families live in properties/search, which only tests import. rapid pulls
// in the testing package (and its flags) wherever it is linked.
func TestBinaryCarriesNoTestCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/simlab/simlab/cmd/simlab").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps printed %d packages; want the binary's whole import graph", len(deps))
	}
	for _, d := range deps {
		if d == "testing" || strings.HasPrefix(d, "pgregory.net/rapid") || strings.HasPrefix(d, "github.com/simlab/simlab/properties/search") {
			t.Errorf("cmd/simlab links %s", d)
		}
	}
}
