package model

import (
	"slices"
	"testing"
)

func TestGrowDoubles(t *testing.T) {
	var s []int
	grows := 0
	for i := range 100_000 {
		if len(s) == cap(s) {
			grows++
		}
		s = append(grow(s), i)
	}
	// Doubling from 8: 8, 16, ..., 131072 is 15 allocations; append's
	// growth by a quarter past 256 would take about 40.
	if grows > 16 {
		t.Fatalf("grow reallocated %d times for 100000 appends, want at most 16", grows)
	}
	want := make([]int, 100_000)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(s, want) {
		t.Fatal("grow lost or moved elements")
	}
}
