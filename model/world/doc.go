// Package world is the pure core of the World store (DOMAIN §1–§2): it validates
// events.create, appends accepted events to the run's log and keeps run and step
// rows as projections of it. No time passes here; callers pass `now`.
package world
