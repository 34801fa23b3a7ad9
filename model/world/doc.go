// Package world is the pure core of the World store (DOMAIN §1–§2): it validates
// events.create, appends accepted events to the run's log and keeps run and step
// rows as projections of it. No time passes here; callers pass `now`.
//
// Its rules come in three sets (Rules): those of the real world-local and
// world-postgres adapters, checked call by call against the published packages
// by the differential test in conformance/, and DOMAIN.md §2 as written, kept
// for world-vercel, which cannot be run here (docs/CONFORMANCE.md).
package world
