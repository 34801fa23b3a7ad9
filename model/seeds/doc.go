// Package seeds is the one grammar every command and the TUI read seeds in
// (N, A..B, and comma-separated lists of them such as 1..8,42) and the one
// reader of --shard i/n, so `check --seed-range`, `sweep`, `tui --seed`, the
// TUI's :seeds and its knobs form accept and print the same text.
package seeds
