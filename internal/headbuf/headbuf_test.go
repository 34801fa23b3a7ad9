package headbuf

import (
	"strings"
	"testing"
)

func TestBufferKeepsTheHead(t *testing.T) {
	var b Buffer
	b.Write([]byte("first\n"))
	for range 100 {
		if n, err := b.Write([]byte(strings.Repeat("x", 1024))); n != 1024 || err != nil {
			t.Fatalf("write: %d, %v", n, err)
		}
	}
	s := b.String()
	if !strings.HasPrefix(s, "first\n") || len(s) > Limit+1024 || len(s) < Limit {
		t.Fatalf("kept %d bytes starting %q", len(s), s[:10])
	}
}
