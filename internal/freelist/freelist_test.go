package freelist

import "testing"

// A value given back is the next one taken; New runs only when none is free.
func TestListReusesWhatIsGivenBack(t *testing.T) {
	made := 0
	l := List[int]{New: func() *int { made++; v := made; return &v }}
	a, b := l.Get(), l.Get()
	if made != 2 || *a != 1 || *b != 2 {
		t.Fatalf("made %d, got %d and %d", made, *a, *b)
	}
	l.Put(a)
	if c := l.Get(); c != a || made != 2 {
		t.Fatalf("after giving a back: got %p (a is %p), made %d", c, a, made)
	}
}
