// Package tui is simlab's interactive terminal lab (tview): runs, timelines,
// span details, verdicts and comparisons. It drives the model through its
// public API and holds no simulation logic of its own.
package tui
