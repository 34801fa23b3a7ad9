// Package check runs simlab's properties over many seeds: the sweep of seeds
// behind `simlab check` (coverage, declared outcomes, the first
// counterexample of each property), shrinking a counterexample to its
// smallest schedule, schedule files that replay it, the known-findings
// baseline CI judges a check against, the differential check of a change
// against a base (--diff) and the swarm coverage report. The properties
// themselves are package properties'.
package check
