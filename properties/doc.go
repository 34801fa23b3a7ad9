// Package properties holds the invariants simlab checks, each a plain function
// from a model.History to the violations it proves, and the rapid-driven
// searches that shrink a failing schedule to a small story.
package properties
