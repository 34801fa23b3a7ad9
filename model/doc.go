// Package model is the protocol of DOMAIN.md as simulated services on the sim
// kernel: world stores and their validation rules, the redelivering queue,
// producers, version-skewed consumers, the orchestrator, scenarios and
// protocol variants. It records everything that happens in a History.
package model
