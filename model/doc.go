// Package model is the protocol of DOMAIN.md as simulated services on the sim
// kernel: world stores and their validation rules, the redelivering queue,
// producers, version-skewed consumers, the orchestrator, scenarios and
// protocol variants. It records everything that happens in a History.
//
// One file per part: engine.go wires the parts and dispatches kernel events;
// service.go is the World as a service (calls, pools, latency); queue.go the
// queue; delivery.go a delivery's life and the state → actor step table;
// client.go, orchestrator.go, consumer.go and completer.go the actors;
// producer.go how any actor publishes a step message. docs/ARCHITECTURE.md
// has the map.
package model
