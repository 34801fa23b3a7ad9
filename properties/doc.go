// Package properties holds the invariants simlab checks, each a plain function
// from a model.History to the violations it proves, with the story that
// explains each violation. Running them over many seeds, shrinking and
// saving a counterexample is package check's.
package properties
