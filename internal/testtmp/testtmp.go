package testtmp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The directories are world-traversable (0755), as /tmp is: a test's
// PostgreSQL runs as another user and must reach its data directory.
//
// Main runs m with TMPDIR set to <temp>/simlab-test-<name>/pid-<pid>,
// after removing the directories there of processes that no longer run,
// and removes its own when m ends.
func Main(m *testing.M, name string) int {
	root := filepath.Join(os.TempDir(), "simlab-test-"+name)
	if err := os.MkdirAll(root, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "testtmp: %v\n", err)
		return m.Run()
	}
	_ = os.Chmod(root, 0o755) // one an earlier version made 0700
	removeDead(root)
	own := filepath.Join(root, "pid-"+strconv.Itoa(os.Getpid()))
	if err := os.MkdirAll(own, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "testtmp: %v\n", err)
		return m.Run()
	}
	old, had := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", own)
	code := m.Run()
	if had {
		os.Setenv("TMPDIR", old)
	} else {
		os.Unsetenv("TMPDIR")
	}
	os.RemoveAll(own)
	return code
}

// removeDead removes root's pid-N directories whose process is gone.
func removeDead(root string) {
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "pid-"))
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "pid-") || err != nil || alive(pid) {
			continue
		}
		os.RemoveAll(filepath.Join(root, e.Name()))
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
