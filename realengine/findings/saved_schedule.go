package findings

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/realengine"
)

// judgeSchedule reproduces a saved schedule (testdata/reproduce/name) on
// the release three times: holds when every time every plan entry was
// released in order with the History's answers and the property was
// violated on the real run; fixed when every time the plan was honoured and
// the property held; undecided when the release did not make the
// History's calls (it diverged: the finding cannot be judged by this
// schedule there).
func judgeSchedule(name string) func(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error) {
	return func(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error) {
		const times = 3
		s, err := check.LoadSchedule(filepath.Join(r.Dir, "testdata", "reproduce", name))
		if err != nil {
			return Judgement{}, err
		}
		dir, err := os.MkdirTemp("", "simlab-matrix-reproduce-")
		if err != nil {
			return Judgement{}, err
		}
		defer os.RemoveAll(dir)
		verdicts := map[string]int{}
		var last realengine.CoreReproduction
		for range times {
			rp, err := realengine.PrepareReproduction(s, name)
			if err != nil {
				return Judgement{}, err
			}
			if err := realengine.Reproduce(ctx, r, s, rp, realengine.ReproduceOptions{Cores: []string{rel.Core.Version}, WorldLocal: rel.WorldLocal.Package(), Timeout: o.Timeout, OutDir: dir, Base: "matrix"}); err != nil {
				return Judgement{}, err
			}
			last = rp.Cores[0]
			verdicts[last.Verdict]++
		}
		return scheduleVerdict(name, s.Property, verdicts, times, last), nil
	}
}

// scheduleVerdict is judgeSchedule's verdict from its reproductions'
// verdicts (times in all) and the last one.
func scheduleVerdict(name, property string, verdicts map[string]int, times int, last realengine.CoreReproduction) Judgement {
	ev := fmt.Sprintf("reproduce %s, %d times: %s", name, times, countsString(verdicts))
	switch {
	case verdicts[realengine.VerdictReproduced] == times:
		return Judgement{Holds, ev + "; " + property + " violated on the real run's " + last.JudgedOn}
	case verdicts[realengine.VerdictHonouredNotViolated] == times:
		return Judgement{Fixed, ev + "; " + last.Reason}
	case last.Verdict == realengine.VerdictDiverged:
		return Judgement{Undecided, fmt.Sprintf("%s; diverged at entry %d: %s", ev, last.DivergedAt, realengine.FirstLine(last.Reason, 300))}
	}
	return Judgement{Undecided, ev}
}
