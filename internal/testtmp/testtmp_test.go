package testtmp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A dead process's directory is removed, a live one's is kept.
func TestRemoveDeadKeepsTheLiving(t *testing.T) {
	root := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadDir := filepath.Join(root, "pid-"+strconv.Itoa(dead.Process.Pid))
	liveDir := filepath.Join(root, "pid-"+strconv.Itoa(os.Getpid()))
	other := filepath.Join(root, "not-a-pid")
	for _, d := range []string{deadDir, liveDir, other} {
		if err := os.MkdirAll(filepath.Join(d, "left"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	removeDead(root)
	if _, err := os.Stat(deadDir); !os.IsNotExist(err) {
		t.Errorf("the dead process's directory is still there: %v", err)
	}
	for _, d := range []string{liveDir, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}
