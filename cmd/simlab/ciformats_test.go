package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// check --junit and --report write their files for a plain, a baselined
// and a differential check (the page's layout is tested in a browser in
// report/browser_test.go).
func TestCheckWritesJUnitAndHTML(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		args    []string
		failure string
	}{
		{"plain", []string{"--scenario", "golden-t5", "--variant", "pre-fix-fence", "--seeds", "2"}, "no-start-on-terminal violated"},
		{"baseline", []string{"--scenario", "golden-t3", "--seeds", "2", "--baseline", knownFindings}, ""},
		{"diff", []string{"--scenario", "golden-t5", "--variant", "pre-fix-fence", "--diff", "--seeds", "2"}, "fails with the change and holds without it"},
	}
	for _, c := range cases {
		junit, page := filepath.Join(dir, c.name+".xml"), filepath.Join(dir, c.name+".html")
		_, _, err := runCLI(t, append([]string{"check", "--schedules", dir, "--junit", junit, "--report", page}, c.args...)...)
		if want := map[bool]int{true: 1, false: 0}[c.failure != ""]; exitCode(err) != want {
			t.Errorf("%s: exit %d, want %d", c.name, exitCode(err), want)
		}
		raw, err := os.ReadFile(junit)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Failures int `xml:"failures,attr"`
			Skipped  int `xml:"skipped,attr"`
		}
		if err := xml.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if (doc.Failures > 0) != (c.failure != "") || !strings.Contains(string(raw), c.failure) {
			t.Errorf("%s: %d failures, want text %q:\n%s", c.name, doc.Failures, c.failure, raw)
		}
		if c.name == "baseline" && doc.Skipped != 1 {
			t.Errorf("baseline: the known finding is not skipped:\n%s", raw)
		}
		html, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(html), "<!DOCTYPE html>") || (c.failure != "" && !strings.Contains(string(html), `class="bar`)) {
			t.Errorf("%s: the page has no waterfall:\n%.400s", c.name, html)
		}
	}
}
