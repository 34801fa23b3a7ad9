package realengine

import "testing"

// TestWriteOrderCountsOverlappingWritesAnsweredInReverse: only writes in
// the World together and arrived at least a millisecond apart make a pair,
// and a pair is reversed when the later arrival answered first.
func TestWriteOrderCountsOverlappingWritesAnsweredInReverse(t *testing.T) {
	for _, tc := range []struct {
		name           string
		ws             []interval
		pairs, reverse int
	}{
		{"served in arrival order", []interval{{From: 0, To: 10}, {From: 2, To: 20}, {From: 4, To: 30}}, 3, 0},
		{"the last arrival answered first", []interval{{From: 0, To: 30}, {From: 2, To: 20}, {From: 4, To: 10}}, 3, 3},
		{"one after another: no pair", []interval{{From: 0, To: 5}, {From: 5, To: 9}, {From: 10, To: 12}}, 0, 0},
		{"arrived together: no order of their own", []interval{{From: 0, To: 30}, {From: 0.5, To: 10}}, 0, 0},
		{"unsorted input", []interval{{From: 4, To: 10}, {From: 0, To: 30}, {From: 2, To: 20}}, 3, 3},
	} {
		got := writeOrderOf(tc.ws)
		if got.Pairs != tc.pairs || got.Reversed != tc.reverse {
			t.Errorf("%s: %+v, want %d pairs, %d reversed", tc.name, got, tc.pairs, tc.reverse)
		}
	}
	var none WriteOrder
	if none.Share() != 0 {
		t.Errorf("no pairs: share %v, want 0", none.Share())
	}
	if s := (WriteOrder{Pairs: 4, Reversed: 1}).Add(WriteOrder{Pairs: 4, Reversed: 3}).Share(); s != 0.5 {
		t.Errorf("4 of 8: share %v, want 0.5", s)
	}
}
