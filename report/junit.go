package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/properties"
)

// The JUnit XML schema CI systems read (Jenkins, GitLab, GitHub actions'
// test reporters): testsuites > testsuite > testcase, with failure and
// skipped children and system-out.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// Case is one scenario × property verdict, in the form both reports share.
type Case struct {
	Property string
	// Failed: violated (and, against a baseline, not known; in a
	// differential check, new with the change).
	Failed bool
	// Known is the baseline's reason when every violation is a known one.
	Known string
	// NotJudged is why a program's runs' spans could not judge the
	// property (a skipped case).
	NotJudged string
	Summary   string // one line: the verdict
	First     *check.First
	// BaseReplay is a differential counterexample's run without the change.
	BaseReplay string
}

// Check is one check's verdicts: its name, its scenario and a case per
// property, plus coverage.
type Check struct {
	Name, Scenario string
	Seeds          int
	Cases          []Case
	Missing        []string // declared outcomes that never happened
	Notes          []string
}

// FromReport turns `simlab check`'s report into a Check.
func FromReport(name string, rep *check.Report) Check {
	c := Check{Name: name, Scenario: rep.Scenario, Seeds: rep.Seeds, Missing: rep.Missing}
	if rep.Baseline != nil {
		c.Notes = rep.Baseline.Notes
	}
	for _, p := range properties.Names() {
		n := rep.Violations[p]
		k := Case{Property: p, Summary: "holds on every seed"}
		if why, ok := rep.NotJudged[p]; ok {
			k.Summary, k.NotJudged = "not judged on a program's spans: "+why, why
		}
		if n > 0 {
			k.Summary = fmt.Sprintf("violated on %d of %d seeds (%s)", n, rep.Seeds, rep.ViolatingSeeds[p])
			k.Failed = true
			if b := rep.Baseline; b != nil {
				if b.New[p] == "" {
					k.Failed, k.Known = false, b.Reasons[p]
					k.Summary += ": all known"
				} else {
					k.Summary += "; new on seeds " + b.New[p]
				}
			}
			k.First = rep.First[p]
		}
		c.Cases = append(c.Cases, k)
	}
	return c
}

// FromDiff turns a differential check's report into a Check.
func FromDiff(name string, rep *check.DiffReport) Check {
	c := Check{Name: name, Scenario: rep.Scenario, Seeds: rep.Seeds, Missing: rep.Missing}
	for _, p := range properties.Names() {
		k := Case{Property: p, Summary: "no difference with the change"}
		if n := rep.New[p]; n > 0 {
			k.Failed = true
			k.Summary = fmt.Sprintf("fails with the change and holds without it on %d of %d seeds (%s)", n, rep.Seeds, rep.NewSeeds[p])
			if f := rep.First[p]; f != nil {
				first := f.First
				k.First, k.BaseReplay = &first, f.BaseReplay
			}
		}
		if n := rep.Fixed[p]; n > 0 {
			k.Summary += fmt.Sprintf("; fixed on %d seeds (%s)", n, rep.FixedSeeds[p])
		}
		if n := rep.Both[p]; n > 0 {
			k.Summary += fmt.Sprintf("; fails in both on %d seeds", n)
		}
		c.Cases = append(c.Cases, k)
	}
	return c
}

// failureText is what a CI shows for a failed case: the story, the replay
// command and the schedule file.
func failureText(k Case) string {
	var b strings.Builder
	b.WriteString(k.Summary + "\n")
	if f := k.First; f != nil {
		fmt.Fprintf(&b, "\nfirst counterexample (seed %d):\n%s\n\nreplay: %s\n", f.Seed, strings.Join(f.Story, "\n"), f.Replay)
		if k.BaseReplay != "" {
			fmt.Fprintf(&b, "base:   %s\n", k.BaseReplay)
		}
		if f.ScheduleFile != "" {
			fmt.Fprintf(&b, "schedule: %s\n", f.ScheduleFile)
		}
	}
	return b.String()
}

// JUnit writes checks as JUnit XML: a testsuite per check, a testcase per
// scenario × property (classname simlab.<scenario>), a failure carrying the
// story, the replay command and the schedule file; a property whose every
// violation is a known finding is skipped with its reason, and the
// scenario's declared outcomes are a testcase of their own.
func JUnit(w io.Writer, checks ...Check) error {
	out := junitSuites{Name: "simlab check"}
	for _, c := range checks {
		s := junitSuite{Name: c.Name, Time: "0"}
		for _, k := range c.Cases {
			jc := junitCase{Classname: "simlab." + c.Scenario, Name: k.Property, Time: "0", SystemOut: k.Summary}
			switch {
			case k.Failed:
				msg := k.Summary
				if k.First != nil {
					msg = k.First.Message
				}
				jc.Failure = &junitFailure{Message: msg, Type: "property violated", Text: failureText(k)}
				s.Failures++
			case k.Known != "":
				jc.Skipped = &junitSkipped{Message: "known finding: " + k.Known}
				s.Skipped++
			case k.NotJudged != "":
				jc.Skipped = &junitSkipped{Message: "not judged on a program's spans: " + k.NotJudged}
				s.Skipped++
			}
			s.Cases = append(s.Cases, jc)
		}
		cov := junitCase{Classname: "simlab." + c.Scenario, Name: "coverage (declared outcomes)", Time: "0",
			SystemOut: fmt.Sprintf("%d seeds; every declared outcome happened", c.Seeds)}
		if len(c.Missing) > 0 {
			cov.Failure = &junitFailure{Message: "never happened: " + strings.Join(c.Missing, ", "), Type: "coverage"}
			s.Failures++
		}
		if len(c.Notes) > 0 {
			cov.SystemOut += "\n" + strings.Join(c.Notes, "\n")
		}
		s.Cases = append(s.Cases, cov)
		s.Tests = len(s.Cases)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Skipped += s.Skipped
		out.Suites = append(out.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
