package npminstall

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/simlab/simlab/internal/procgroup"
)

// marker is written into node_modules before npm starts and removed once
// it succeeded.
const marker = ".simlab-install-unfinished"

// Unfinished reports whether an install into dir was started and never
// finished: its node_modules cannot be trusted whatever files it holds.
func Unfinished(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "node_modules", marker))
	return err == nil
}

// Run runs npm install args... in dir with env added to simlab's, and
// returns npm's output.
func Run(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
		return nil, err
	}
	mark := filepath.Join(dir, "node_modules", marker)
	if err := os.WriteFile(mark, []byte("npm install was started here and has not finished\n"), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "npm", append([]string{"install"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	procgroup.Set(cmd)
	err := cmd.Run()
	procgroup.Kill(cmd)
	if err == nil && ctx.Err() == nil {
		err = os.Remove(mark)
	}
	if err == nil && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	if err != nil && errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return out.Bytes(), err
}
