package traces

import (
	"slices"
	"testing"
)

func TestTreeHangsOrphansUnderTheRootAfterItsChildren(t *testing.T) {
	spans := []Span{
		{SpanID: "a"},                // root
		{SpanID: "b", ParentID: "z"}, // parent not in the file
		{SpanID: "c", ParentID: "a"},
		{SpanID: "d", ParentID: "c"},
		{SpanID: "e"}, // a second parentless span
	}
	tr, err := NewTree(spans)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Root != 0 || !slices.Equal(tr.Children[0], []int{2, 1, 4}) {
		t.Fatalf("root %d children %v, want 0 with [2 1 4]", tr.Root, tr.Children[0])
	}
	if !slices.Equal(tr.Depth, []int{0, 1, 1, 2, 1}) || !slices.Equal(tr.Parent, []int{-1, 0, 0, 2, 0}) {
		t.Fatalf("depth %v parent %v", tr.Depth, tr.Parent)
	}
	if i, ok := tr.Index("d"); !ok || i != 3 {
		t.Fatalf("Index(d) = %d, %v", i, ok)
	}
	if _, err := NewTree([]Span{{SpanID: "x", ParentID: "y"}}); err == nil {
		t.Fatal("a trace with no parentless span built a tree")
	}
}
