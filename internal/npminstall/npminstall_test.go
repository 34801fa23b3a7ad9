package npminstall

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simlab/simlab/internal/testreal"
)

// An install cut short leaves its tree marked unfinished, and npm (with
// every child it started) is gone when Run returns; one that succeeds
// leaves no mark. npm install with no package.json in dir is a quick
// success; an install that cannot finish before the context ends is a
// package.json whose only dependency's registry never answers (127.0.0.1,
// a listener that accepts and says nothing).
func TestAnInstallCutShortStaysMarked(t *testing.T) {
	testreal.Need(t, testreal.Engine) // (npm is how the real engine and Worlds are installed)
	ok := t.TempDir()
	if err := os.WriteFile(filepath.Join(ok, "package.json"), []byte(`{"name":"x","version":"1.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := Run(context.Background(), ok, []string{"npm_config_cache=" + t.TempDir()}, "--no-audit", "--no-fund"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if Unfinished(ok) {
		t.Error("a finished install is marked unfinished")
	}

	cut := t.TempDir()
	if err := os.WriteFile(filepath.Join(cut, "package.json"), []byte(`{"name":"y","version":"1.0.0","dependencies":{"left-pad":"1.3.0"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := silentRegistry(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := Run(ctx, cut, []string{"npm_config_cache=" + t.TempDir(), "npm_config_registry=" + reg, "npm_config_fetch_retries=0"}, "--no-audit", "--no-fund"); err == nil {
		t.Fatal("an install whose registry never answers succeeded")
	}
	if !Unfinished(cut) {
		t.Error("an install cut short is not marked unfinished")
	}
	if left := inDir(t, cut); len(left) > 0 {
		t.Errorf("processes still running in the cut install's directory: %v", left)
	}
}

// inDir lists the processes whose working directory is dir (Linux's /proc;
// elsewhere none can be listed).
func inDir(t *testing.T, dir string) []string {
	t.Helper()
	cwds, _ := filepath.Glob("/proc/[0-9]*/cwd")
	var out []string
	for _, c := range cwds {
		if target, err := os.Readlink(c); err == nil && target == dir {
			out = append(out, filepath.Base(filepath.Dir(c)))
		}
	}
	return out
}
