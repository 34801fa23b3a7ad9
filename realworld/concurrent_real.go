package realworld

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// batchRequest is the driver's batch op (driver.mjs).
type batchRequest struct {
	Op       string         `json:"op"`
	Calls    []batchCall    `json:"calls"`
	Readback []readbackSpec `json:"readback"`
	Schedule [][2]int       `json:"schedule,omitempty"`
}

type batchCall struct {
	request
	DelayTicks int  `json:"delay_ticks,omitempty"`
	DelayUS    int  `json:"delay_us,omitempty"`
	After      *int `json:"after,omitempty"`
}

type readbackSpec struct {
	Run    string   `json:"run"`
	Steps  []string `json:"steps"`
	Hooks  []string `json:"hooks,omitempty"`
	Tokens []string `json:"tokens,omitempty"`
}

type batchAnswer struct {
	Answers  []Reply    `json:"answers"`
	Readback []Readback `json:"readback"`
	Broken   []string   `json:"broken"`
}

// RunHistory runs a concurrent history on the real World with runs and step
// ids it has never seen: the runs are created one at a time, then each batch
// is sent whole, its calls issued at once, and every run is read back after
// it. Logs come back with the harness's step ids mapped to "sN".
func (d *Driver) RunHistory(h History) ([]BatchResult, error) {
	r := d.NewRun()
	for run := 0; run < h.Runs; run++ {
		if _, err := r.Apply(Call{Op: "create_run", Run: run}); err != nil {
			return nil, err
		}
	}
	steps, hooks, tokens := h.Steps(), h.Hooks(), h.Tokens()
	var specs []readbackSpec
	for run := 0; run < h.Runs; run++ {
		spec := readbackSpec{Run: r.runKey(run)}
		for _, s := range steps[run] {
			spec.Steps = append(spec.Steps, r.stepKey(run, s))
		}
		for _, k := range hooks[run] {
			spec.Hooks = append(spec.Hooks, r.hookKey(run, k))
		}
		// Every run's read-back reads the tokens: they are the World's.
		for _, t := range tokens {
			spec.Tokens = append(spec.Tokens, r.tokenKey(t))
		}
		specs = append(specs, spec)
	}
	out := make([]BatchResult, 0, len(h.Batches))
	for bi, b := range h.Batches {
		req := batchRequest{Op: "batch", Readback: specs, Schedule: b.Schedule}
		for _, c := range b.Calls {
			bc := batchCall{request: request{Op: c.Op, Run: r.runKey(c.Run), Type: c.Type, Lazy: c.Lazy, RetryAfterHours: c.RetryAfterHours}, DelayTicks: c.DelayTicks, DelayUS: c.DelayUS, After: c.After}
			if StepEvent(c.Type) || c.Op == OpGetStep {
				bc.Step = r.stepKey(c.Run, c.Step)
			}
			if HookEvent(c.Type) {
				bc.Hook, bc.Token = r.hookKey(c.Run, c.Hook), r.tokenKey(c.Token)
			}
			req.Calls = append(req.Calls, bc)
		}
		line, err := d.send(req)
		if err != nil {
			return out, err
		}
		var a batchAnswer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			return out, fmt.Errorf("%s driver: unreadable batch answer %q: %v", d.World, line, err)
		}
		if len(a.Answers) != len(b.Calls) || len(a.Readback) != h.Runs {
			return out, fmt.Errorf("%s driver: batch %d: %d answers and %d read-backs for %d calls and %d runs", d.World, bi, len(a.Answers), len(a.Readback), len(b.Calls), h.Runs)
		}
		for i, rep := range a.Answers {
			if rep.Res == "other" {
				return out, fmt.Errorf("%s driver: batch %d: %s answered %q, which is none of the World's error classes; stderr:\n%s", d.World, bi, b.Calls[i], rep.Msg, d.stderr.String())
			}
			if rep.Log != nil {
				a.Answers[i].Log = r.stepNames(rep.Log)
			}
		}
		for i := range a.Readback {
			a.Readback[i].Log = r.stepNames(a.Readback[i].Log)
			for j, o := range a.Readback[i].Owners {
				a.Readback[i].Owners[j] = r.hookNameOf(o)
			}
		}
		out = append(out, BatchResult{Replies: a.Answers, Readbacks: a.Readback, Broken: a.Broken})
	}
	return out, nil
}

func (r *RealRun) runKey(run int) string { return fmt.Sprintf("%s_r%d", r.prefix, run) }

func (r *RealRun) stepKey(run, step int) string {
	return fmt.Sprintf("step_%s_r%d_s%d", r.prefix, run, step)
}

// stepNames maps the log's "type:CORR" entries back to "type:sN" for
// steps and "type:hN" for hooks.
func (r *RealRun) stepNames(log []string) []string {
	out := make([]string, len(log))
	for i, e := range log {
		out[i] = e
		typ, corr, ok := strings.Cut(e, ":")
		if !ok || strings.HasPrefix(typ, "unreadable") {
			continue
		}
		if n, ok := r.hookName[corr]; ok {
			_, hook, _ := strings.Cut(n, ".")
			out[i] = typ + ":" + hook
			continue
		}
		// step_<prefix>_r<run>_s<step>
		if k := strings.LastIndex(corr, "_s"); k > 0 {
			if n, err := strconv.Atoi(corr[k+2:]); err == nil {
				out[i] = fmt.Sprintf("%s:s%d", typ, n)
			}
		}
	}
	return out
}

// send writes one request line and waits for its answer line.
func (d *Driver) send(req any) (string, error) {
	b, _ := json.Marshal(req)
	if _, err := d.in.Write(append(b, '\n')); err != nil {
		return "", d.crashed(fmt.Sprintf("writing %s", b))
	}
	select {
	case line, ok := <-d.lines:
		if !ok {
			return "", d.crashed(fmt.Sprintf("answering %s", b))
		}
		return line, nil
	case <-time.After(callTimeout):
		return "", fmt.Errorf("%s driver: no answer to %s within %v; stderr:\n%s", d.World, b, callTimeout, d.stderr.String())
	}
}
