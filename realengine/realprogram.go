package realengine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/sim"
)

// ProgramBundle returns the directory of core's compiled workflows with the
// programs (by name) beside the fan-out workflow, compiling it the first
// time for this set of programs: programs.ts (ProgramsTS) and fanout.ts,
// bundled by core's own builders over core's own install, as Bundle does.
func (r *Runner) ProgramBundle(ctx context.Context, c Core, progs map[string][]program.Node) (string, error) {
	src, err := ProgramsTS(progs)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(src))
	return r.bundleOnce(ctx, c, c.Version+"+programs-"+hex.EncodeToString(sum[:6]), func(dir string) error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, ProgramsFile+".ts"), []byte(src), 0o644); err != nil {
			return err
		}
		return r.compile(ctx, c, dir)
	})
}

// RunProgram runs program prog (named name) on the real core: cfg.Runs runs
// of its workflow, each step's body running for its statement's body time
// (defaultBody where the statement gives none; its first hangs attempts
// never return, so cfg.MaxDurationMS must end them) and returning a result
// drawn as the statement says. cfg's Fanouts are ignored.
func (r *Runner) RunProgram(ctx context.Context, core Core, cfg HarnessConfig, name string, prog []program.Node, defaultBody sim.Dist, timeout time.Duration) (*RealRun, error) {
	compiled, err := program.Compile(prog)
	if err != nil {
		return nil, err
	}
	if cfg.MaxDurationMS <= 0 && compiled.HangingAttempts() > 0 {
		return nil, errors.New("the program has a step that hangs (hangs: N) and the run no time limit to end it (HarnessConfig.MaxDurationMS)")
	}
	dir, err := r.ProgramBundle(ctx, core, map[string][]program.Node{name: prog})
	if err != nil {
		return nil, err
	}
	cfg.BundleDir, cfg.Program, cfg.Fanouts = dir, WorkflowFunction(name), []int{}
	cfg.ProgramSteps = make([]programStep, len(compiled.Nodes))
	for i := range compiled.Nodes {
		cfg.ProgramSteps[i] = programStep{Body: distOf(compiled.Body(int32(i), defaultBody)), Results: compiled.Results(int32(i)), Hangs: compiled.Hangs(int32(i)),
			Pinned: cfg.PinnedBodies[int32(i)]}
	}
	return r.Run(ctx, core, cfg, timeout)
}
