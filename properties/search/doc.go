// Package search is the rapid side of the property tests: a sim.Chooser
// whose every choice is a rapid draw (so rapid's shrinker shrinks a failing
// schedule), and the scenario families whose knobs rapid draws. It imports
// rapid, and through it the testing package, so only tests import it: the
// simlab binary carries no test code (a test in cmd/simlab checks that).
package search
