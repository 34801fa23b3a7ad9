// Command simlab is the command line of the simulation lab: it parses flags,
// wires scenarios, checks, traces and the terminal UI together, and holds no
// logic a test needs.
package main
