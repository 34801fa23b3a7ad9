package bounded

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFileRefusesWhatIsTooLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(p, 5, "a test file"); err != nil || string(b) != "12345" {
		t.Fatalf("at the limit: %q, %v", b, err)
	}
	_, err := ReadFile(p, 4, "a test file")
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Path != p || !strings.Contains(err.Error(), "larger than 4 bytes, the most a test file may hold") {
		t.Fatalf("past the limit: %v", err)
	}
	// An endless file stops at the limit.
	if _, err := ReadFile("/dev/zero", 1<<20, "a test file"); !errors.As(err, &tl) || !strings.Contains(err.Error(), "1 MiB") {
		t.Fatalf("/dev/zero: %v", err)
	}
}
