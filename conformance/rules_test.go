package conformance

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/simlab/simlab/realworld"
	"pgregory.net/rapid"
)

// A situation (model.go) reads
//
//	EVENT[ (lazy)][ with another run's id] | run STATUS[ | step STATUS][ | another run has a row under the id] → ANSWER
//
// and each belongs to one row of docs/CONFORMANCE.md's rules table, in one
// part of it (the table's cells with more than one number). ruleOf names the
// row and the part; rulesReport sums the coverage by them, with the answers,
// so that the table is what SIMLAB_CONFORMANCE_COVERAGE writes.

// situationParts is a situation taken apart.
type situationParts struct {
	ev            string // event type
	lazy, reused  bool   // lazy start; another run's step id
	run, step     string // statuses; step "" for run events
	otherHoldsRow bool   // another run has a row under the step id
	answer        string
}

func parseSituation(sit string) (situationParts, bool) {
	var p situationParts
	head, answer, ok := strings.Cut(sit, " → ")
	if !ok {
		return p, false
	}
	p.answer = answer
	fields := strings.Split(head, " | ")
	if len(fields) < 2 || !strings.HasPrefix(fields[1], "run ") {
		return p, false
	}
	ev := fields[0]
	if p.reused = strings.HasSuffix(ev, " with another run's id"); p.reused {
		ev = strings.TrimSuffix(ev, " with another run's id")
	}
	if p.lazy = strings.HasSuffix(ev, " (lazy)"); p.lazy {
		ev = strings.TrimSuffix(ev, " (lazy)")
	}
	p.ev, p.run = ev, strings.TrimPrefix(fields[1], "run ")
	for _, f := range fields[2:] {
		switch {
		case strings.HasPrefix(f, "step "):
			p.step = strings.TrimPrefix(f, "step ")
		case f == "another run has a row under the id":
			p.otherHoldsRow = true
		default:
			return p, false
		}
	}
	return p, true
}

// ruleOf names the rules-table row (and its part) that decides a situation;
// "" when none does.
func ruleOf(sit string) (rule, part string) {
	p, ok := parseSituation(sit)
	if !ok {
		return "", ""
	}
	ended := p.run == "completed" || p.run == "failed" || p.run == "cancelled"
	pending := p.step == "pending" || p.step == "pending, retryAfter ahead"
	terminal := p.step == "completed" || p.step == "failed"
	bare := p.ev == "step_started" && !p.lazy
	outcome := p.ev == "step_completed" || p.ev == "step_failed" || p.ev == "step_retrying"
	switch {
	// A creation of a step this run has no row for while another run holds
	// one under the same id: where world-postgres (one row per id) and
	// world-local (one per run and id) part. Every other call under a reused
	// id meets the rows above like any other: on world-local the step is the
	// run's own, on world-postgres the run holds the row or has none.
	case p.otherHoldsRow && p.step == "missing" && !ended && p.ev == "step_created":
		return "13", "step_created"
	case p.otherHoldsRow && p.step == "missing" && !ended && p.lazy:
		return "13", "lazy step_started"
	case p.ev == "step_created" && ended:
		return "1", "step_created"
	case p.lazy && ended:
		return "1", "lazy step_started"
	case p.ev == "step_created":
		if p.step == "missing" {
			return "2", "missing"
		}
		return "2", "existing"
	case p.step == "missing" && (bare || outcome):
		if ended {
			return "3", "ended run"
		}
		return "3", "live run"
	case p.lazy:
		if p.step == "missing" {
			return "3b", "missing"
		}
		return "3b", "existing"
	case terminal && (bare || outcome):
		return "4", ""
	case bare && ended && pending:
		return "5", ""
	case bare && ended && p.step == "running":
		return "5b", ""
	case p.ev == "step_failed" && ended:
		if pending {
			return "5c", "pending"
		}
		return "5c", "running"
	case (p.ev == "step_completed" || p.ev == "step_retrying") && ended:
		return "6", ""
	case bare && p.step == "pending, retryAfter ahead":
		return "7", "retryAfter ahead"
	case bare:
		return "7", "otherwise"
	case (p.ev == "step_completed" || p.ev == "step_failed") && pending:
		return "8", "pending"
	case p.ev == "step_completed" || p.ev == "step_failed":
		return "8", "running"
	case p.ev == "step_retrying" && pending:
		return "9", "pending"
	case p.ev == "step_retrying":
		return "9", "running"
	case p.ev == "run_started":
		switch {
		case ended:
			return "10", "ended"
		case p.run == "running":
			return "10", "running"
		}
		return "10", "pending"
	case p.ev == "run_cancelled" && p.run == "cancelled":
		return "11", "run_cancelled on a cancelled run"
	case ended && (p.ev == "run_completed" || p.ev == "run_failed" || p.ev == "run_cancelled"):
		return "11", "run_completed, run_failed; run_cancelled on completed, failed"
	case p.ev == "run_completed" || p.ev == "run_failed" || p.ev == "run_cancelled":
		return "12", "of a " + p.run + " run"
	}
	return "", ""
}

// rules is rulesReport of a World's coverage so far.
func (c *coverage) rules(world string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return rulesReport(c.m[world])
}

// rulesReport sums a World's situations by rules-table row, part and answer,
// in the table's order.
func rulesReport(sits map[string]int) string {
	type key struct{ rule, part, answer string }
	sum := map[key]int{}
	var unclassified []string
	for s, n := range sits {
		rule, part := ruleOf(s)
		if rule == "" {
			unclassified = append(unclassified, s)
			continue
		}
		_, answer, _ := strings.Cut(s, " → ")
		sum[key{rule, part, answer}] += n
		// Row 14 counts the calls under another run's id again, whatever
		// row above decided them.
		if p, _ := parseSituation(s); p.reused {
			sum[key{"14", "with another run's id", answer}] += n
		}
	}
	keys := make([]key, 0, len(sum))
	for k := range sum {
		keys = append(keys, k)
	}
	order := func(rule string) string { // "3b" after "3", "10" after "9"
		n := strings.TrimRight(rule, "abc")
		return fmt.Sprintf("%03s%s", n, rule[len(n):])
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.rule != b.rule {
			return order(a.rule) < order(b.rule)
		}
		if a.part != b.part {
			return a.part < b.part
		}
		return a.answer < b.answer
	})
	var b strings.Builder
	b.WriteString("rules (docs/CONFORMANCE.md's table): row | part | answer | times met\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%-3s | %s | %s | %d\n", k.rule, k.part, k.answer, sum[k])
	}
	sort.Strings(unclassified)
	for _, s := range unclassified {
		fmt.Fprintf(&b, "unclassified: %s\n", s)
	}
	return b.String()
}

// Every situation the generated sequences and the known ones can meet
// belongs to a row of the rules table, with the answer that row states for
// the World (here the model's answers, which the differential test holds
// equal to the real ones).
func TestEverySituationHasARule(t *testing.T) {
	known, err := realworld.ReadFile("testdata/known.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range realworld.Worlds {
		sits := map[string]int{}
		record := func(calls []realworld.Call) {
			m := NewModelRun(w)
			for _, c := range calls {
				if _, sit := m.Apply(c); sit != "" {
					sits[sit]++
				}
			}
		}
		for _, s := range known.Sequences {
			record(s.Calls)
		}
		rapid.Check(t, func(rt *rapid.T) {
			var calls []realworld.Call
			genSequence(rt, func(c realworld.Call) { calls = append(calls, c) })
			record(calls)
		})
		rep := rulesReport(sits)
		if strings.Contains(rep, "unclassified") {
			t.Errorf("%s: situations no rule of the table decides:\n%s", w.Name, rep)
		}
		// Rows whose answer does not depend on the World.
		for s := range sits {
			rule, part := ruleOf(s)
			_, answer, _ := strings.Cut(s, " → ")
			want := map[string]string{"1": "entity_conflict", "2/missing": "ok", "2/existing": "entity_conflict", "3": "not_found",
				"4": "entity_conflict", "5": "run_expired", "6": "ok", "10/ended": "run_expired", "12": "ok"}
			exp, ok := want[rule+"/"+part]
			if !ok {
				exp = want[rule]
			}
			if exp != "" && answer != exp {
				t.Errorf("%s: %q is rule %s %s, which answers %s", w.Name, s, rule, part, exp)
			}
		}
	}
}
