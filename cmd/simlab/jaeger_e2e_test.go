package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simlab/simlab/internal/testreal"
	"github.com/simlab/simlab/traces"
)

// The end-to-end test of traces: a real Jaeger, built from the Go module
// proxy by the project's own script (scripts/jaeger; the first build takes a
// few minutes, later ones hit the Go build cache), receives a skew-rollout run
// from the real binary; the test reads every trace back through Jaeger's
// query API by trace id and compares it with the OTLP JSON Lines file the
// same command wrote.

// jaeger is one Jaeger this test started: its URLs and its pid.
type jaeger struct {
	otlp, query, health string
	pid                 int
}

// freePorts returns n distinct ports free on 127.0.0.1 right now, never
// Jaeger's defaults (another user of the machine may run a Jaeger there).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// runGroup runs a command the test needs (a build, the script) with
// groupRun, bounded by the test's deadline less time to clean up, and
// fails the test, saying what did not finish, rather than letting go
// test's timeout kill the binary (which runs no cleanup at all and leaves
// the group running). Its temporary files (go build's work directory) go
// to a temp dir of the test.
func runGroup(t *testing.T, what string, cmd *exec.Cmd) []byte {
	t.Helper()
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	tmp := t.TempDir()
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp, "GOTMPDIR="+tmp)
	ctx := t.Context()
	budget := "the test's end"
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-cleanupMargin))
		defer cancel()
		budget = fmt.Sprintf("the test's deadline (%s, less %v to clean up)", d.Format(time.TimeOnly), cleanupMargin)
	}
	out, stopped, err := groupRun(ctx, cmd)
	switch {
	case stopped:
		t.Fatalf("%s did not finish by %s and was stopped with its process group (%v): on a loaded machine the first Jaeger build takes up to 20 minutes; the README's test command gives go test -timeout 60m\n%s",
			what, budget, err, tailBytes(out, 4000))
	case err != nil:
		t.Fatalf("%s: %v\n%s", what, err, tailBytes(out, 4000))
	}
	return out
}

// groupRun runs cmd in a process group of its own until it exits or ctx
// ends. When ctx ends first, the whole group is told to stop (SIGTERM),
// killed after groupGrace, and stopped is true. Either way nothing of the
// group outlives the call; the leader also dies with the test binary
// should that be killed outright (Pdeathsig).
func groupRun(ctx context.Context, cmd *exec.Cmd) (out []byte, stopped bool, err error) {
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// A child that keeps the output pipe open must not hold Wait forever.
	cmd.WaitDelay = groupGrace
	if err := cmd.Start(); err != nil {
		return nil, false, err
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		stopped = true
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(groupGrace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			err = <-done
		}
	}
	// Whatever the leader left in its group (a child it did not wait for)
	// goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return buf.Bytes(), stopped, err
}

// cleanupMargin is kept before the test's deadline for stopping a group and
// the cleanups (scripts/jaeger stop waits up to 10 s); groupGrace is how
// long a group told to stop gets before it is killed.
const (
	cleanupMargin = 45 * time.Second
	groupGrace    = 15 * time.Second
)

func tailBytes(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return "…" + string(b[len(b)-n:])
}

// startJaeger starts a Jaeger of its own through scripts/jaeger, with its
// state (pid file, ports, log) in a temp dir and every port a free one, and
// stops exactly that Jaeger, by its pid, when the test ends, pass or fail.
// The binary is built first, by the script, within the test's deadline.
func startJaeger(t *testing.T) jaeger {
	t.Helper()
	testreal.Need(t, testreal.Jaeger)
	script := filepath.Join("..", "..", "scripts", "jaeger")
	state := t.TempDir()
	p := freePorts(t, 5)
	env := append(os.Environ(), "JAEGER_STATE_DIR="+state,
		fmt.Sprintf("JAEGER_OTLP_HTTP_PORT=%d", p[0]), fmt.Sprintf("JAEGER_OTLP_GRPC_PORT=%d", p[1]),
		fmt.Sprintf("JAEGER_QUERY_PORT=%d", p[2]), fmt.Sprintf("JAEGER_QUERY_GRPC_PORT=%d", p[3]),
		fmt.Sprintf("JAEGER_HEALTH_PORT=%d", p[4]))
	scriptCmd := func(args ...string) *exec.Cmd {
		c := exec.Command("bash", append([]string{script}, args...)...)
		c.Env = env
		return c
	}
	runGroup(t, "scripts/jaeger build", scriptCmd("build"))
	start := scriptCmd("start")
	// The pid file appears before the script waits for health: the
	// cleanup is registered first, so a start that fails or is stopped
	// midway still has its Jaeger stopped.
	t.Cleanup(func() {
		pidText, err := os.ReadFile(filepath.Join(state, "jaeger.pid"))
		if err != nil {
			return // never started
		}
		pid, perr := strconv.Atoi(strings.TrimSpace(string(pidText)))
		// The script stops the pid in this test's state dir only;
		// should that fail, the test kills its own pid itself.
		if out, err := scriptCmd("stop").CombinedOutput(); err != nil {
			t.Errorf("scripts/jaeger stop: %v\n%s", err, out)
			if perr == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	runGroup(t, "scripts/jaeger start", start)
	pidText, _ := os.ReadFile(filepath.Join(state, "jaeger.pid"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		t.Fatalf("scripts/jaeger start left no pid file: %v", err)
	}
	j := jaeger{otlp: fmt.Sprintf("http://127.0.0.1:%d", p[0]), query: fmt.Sprintf("http://127.0.0.1:%d", p[2]),
		health: fmt.Sprintf("http://127.0.0.1:%d/status", p[4]), pid: pid}
	if got, err := scriptCmd("url", "otlp").Output(); err != nil || strings.TrimSpace(string(got)) != j.otlp {
		t.Fatalf("scripts/jaeger url otlp = %q (%v), want %s", got, err, j.otlp)
	}
	return j
}

func buildSimlab(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "simlab")
	runGroup(t, "go build of simlab", exec.Command("go", "build", "-o", bin, "."))
	return bin
}

// fileSpan is what the test needs of a span in the OTLP JSON Lines file.
type fileSpan struct {
	TraceID    string `json:"traceId"`
	SpanID     string `json:"spanId"`
	Name       string `json:"name"`
	Start      string `json:"startTimeUnixNano"`
	Attributes []struct {
		Key   string `json:"key"`
		Value struct {
			String string `json:"stringValue"`
		} `json:"value"`
	} `json:"attributes"`
	Links []struct {
		TraceID string `json:"traceId"`
		SpanID  string `json:"spanId"`
	} `json:"links"`
}

func readTraceFile(t *testing.T, path string) map[string]map[string]fileSpan {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byTrace := map[string]map[string]fileSpan{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var line struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans []fileSpan `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		for _, rs := range line.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					if byTrace[s.TraceID] == nil {
						byTrace[s.TraceID] = map[string]fileSpan{}
					}
					byTrace[s.TraceID][s.SpanID] = s
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return byTrace
}

// jaegerTrace is Jaeger's v1 query API answer.
type jaegerTrace struct {
	Data []struct {
		TraceID string `json:"traceID"`
		Spans   []struct {
			SpanID     string `json:"spanID"`
			Operation  string `json:"operationName"`
			StartTime  int64  `json:"startTime"` // microseconds
			References []struct {
				RefType string `json:"refType"`
				TraceID string `json:"traceID"`
				SpanID  string `json:"spanID"`
			} `json:"references"`
			Tags []struct {
				Key   string `json:"key"`
				Value any    `json:"value"`
			} `json:"tags"`
		} `json:"spans"`
	} `json:"data"`
}

func queryTrace(t *testing.T, query, id string) jaegerTrace {
	t.Helper()
	// Jaeger's pipeline here has no batch processor (tools/jaeger/config.yaml):
	// a span is stored by the time its OTLP request returns, so one query
	// answers.
	resp, err := http.Get(query + "/api/traces/" + id)
	if err != nil {
		t.Fatalf("query trace %s: %v", id, err)
	}
	defer resp.Body.Close()
	var tr jaegerTrace
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || len(tr.Data) != 1 {
		t.Fatalf("trace %s: status %s, %d traces, %v", id, resp.Status, len(tr.Data), err)
	}
	return tr
}

func TestJaegerEndToEnd(t *testing.T) {
	j := startJaeger(t)
	// Another checkout's (or user's) script, with its own state, neither
	// sees nor stops this Jaeger.
	other := exec.Command("bash", filepath.Join("..", "..", "scripts", "jaeger"), "status")
	other.Env = append(os.Environ(), "JAEGER_STATE_DIR="+t.TempDir())
	if out, err := other.CombinedOutput(); err == nil {
		t.Fatalf("status with another state dir claims a Jaeger:\n%s", out)
	}
	other = exec.Command("bash", filepath.Join("..", "..", "scripts", "jaeger"), "stop")
	other.Env = append(os.Environ(), "JAEGER_STATE_DIR="+t.TempDir())
	if out, err := other.CombinedOutput(); err != nil {
		t.Fatalf("stop with another state dir: %v\n%s", err, out)
	}
	if resp, err := http.Get(j.health); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a stop with another state dir stopped this Jaeger: %v", err)
	} else {
		resp.Body.Close()
	}
	bin := buildSimlab(t)
	file := filepath.Join(t.TempDir(), "skew.jsonl")
	cmd := exec.Command(bin, "run", "--scenario", "skew-rollout", "--seed", "1", "--otlp", j.otlp, "--trace-out", file)
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1", "OTEL_SERVICE_NAME=leak")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("simlab run --otlp: %v\n%s", err, out)
	}
	want := readTraceFile(t, file)
	if len(want) < 2 {
		t.Fatalf("%d traces in the file, want one per run of skew-rollout", len(want))
	}
	prologues := map[string]bool{}
	links := 0
	for id, spans := range want {
		got := queryTrace(t, j.query, id)
		if n := len(got.Data[0].Spans); n != len(spans) {
			t.Fatalf("trace %s: Jaeger has %d spans, the file %d", id, n, len(spans))
		}
		for _, s := range got.Data[0].Spans {
			fs, ok := spans[s.SpanID]
			if !ok {
				t.Fatalf("trace %s: Jaeger span %s is not in the file", id, s.SpanID)
			}
			ns, _ := strconv.ParseInt(fs.Start, 10, 64)
			if s.StartTime != ns/1000 {
				t.Fatalf("span %s %s: Jaeger start %dµs, virtual start %dns", s.SpanID, s.Operation, s.StartTime, ns)
			}
			for _, tag := range s.Tags {
				if tag.Key == "workflow.step.dispatch_prologue" {
					prologues[fmt.Sprint(tag.Value)] = true
				}
			}
			for _, r := range s.References {
				if r.RefType == "FOLLOWS_FROM" {
					links++
				}
			}
		}
		for _, fs := range spans {
			if fs.Name == traces.ExecuteSpanName && len(fs.Links) != 1 {
				t.Fatalf("%s span %s has %d links in the file, want its publish", fs.Name, fs.SpanID, len(fs.Links))
			}
		}
	}
	if !prologues["run_context"] || !prologues["runs_get"] {
		t.Fatalf("dispatch_prologue values in Jaeger: %v, want both run_context and runs_get", prologues)
	}
	if links == 0 {
		t.Fatal("no span link came back as a FOLLOWS_FROM reference")
	}

	// check --jaeger reads the same traces back through Jaeger's api/v3
	// search (service and window) and judges them: skew-rollout holds, so
	// exit 0, and the report lists what spans could not judge.
	jc := exec.Command(bin, "check", "--jaeger", j.query, "--service", "simlab-consumer",
		"--start", "2025-12-31T23:00:00Z", "--end", "2026-01-01T03:00:00Z", "--json")
	out, err := jc.Output()
	if err != nil {
		t.Fatalf("check --jaeger: %v\n%s", err, out)
	}
	var rep struct {
		Runs     []string `json:"runs"`
		Verdicts []struct {
			Property string `json:"property"`
			Judged   bool   `json:"judged"`
		} `json:"verdicts"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("check --jaeger --json: %v\n%s", err, out)
	}
	judged := 0
	for _, v := range rep.Verdicts {
		if v.Judged {
			judged++
		}
	}
	if len(rep.Runs) != len(want) || judged == 0 || judged == len(rep.Verdicts) {
		t.Fatalf("check --jaeger judged %d of %d properties over runs %v (want the file's %d runs, some judged, some not)", judged, len(rep.Verdicts), rep.Runs, len(want))
	}
	// Exporting the seed again on another epoch (what --epoch now does
	// every time) makes new traces and leaves the first ones as they were.
	again := filepath.Join(t.TempDir(), "again.jsonl")
	cmd = exec.Command(bin, "run", "--scenario", "skew-rollout", "--seed", "1", "--epoch", "2026-02-01T00:00:00Z", "--otlp", j.otlp, "--trace-out", again)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("second export: %v\n%s", err, out)
	}
	for id, spans := range readTraceFile(t, again) {
		if want[id] != nil {
			t.Fatalf("the second export reuses trace id %s", id)
		}
		if n := len(queryTrace(t, j.query, id).Data[0].Spans); n != len(spans) {
			t.Fatalf("second export, trace %s: Jaeger has %d spans, the file %d", id, n, len(spans))
		}
	}
	for id, spans := range want {
		if n := len(queryTrace(t, j.query, id).Data[0].Spans); n != len(spans) {
			t.Fatalf("after the second export, trace %s has %d spans in Jaeger, want still %d", id, n, len(spans))
		}
	}
}

// With Jaeger down, the command fails within its timeout with an error
// naming the endpoint, and the trace file is still written.
func TestOTLPDownStillWritesTheFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "t2.jsonl")
	start := time.Now()
	_, _, err := runCLI(t, "run", "--scenario", "golden-t2", "--otlp", "http://127.0.0.1:1", "--otlp-timeout", "2s", "--trace-out", file)
	if exitCode(err) != 2 || err == nil || !containsAll(err.Error(), "127.0.0.1:1", file) {
		t.Fatalf("error %v (exit %d), want exit 2 naming the endpoint and the file", err, exitCode(err))
	}
	if time.Since(start) > time.Minute {
		t.Fatal("the failed export was not bounded")
	}
	if st, err := os.Stat(file); err != nil || st.Size() == 0 {
		t.Fatalf("trace file not written: %v", err)
	} else if st.Mode().Perm() != 0o644 {
		t.Fatalf("trace file mode %v, want rw-r--r-- like any file a person shares", st.Mode().Perm())
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// At its deadline a command and everything it started are stopped, not
// left running: the test's bound on the Jaeger build cannot leave a go
// build (or a script's background child) behind, as go test's own timeout
// did (issue 22).
func TestGroupRunStopsTheWholeGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The script tells its background child's pid on fd 3, then waits: the
	// test reads it (a blocking read, no polling) and only then ends ctx.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command("bash", "-c", "sleep 600 & echo $! >&3; exec 3>&-; wait")
	cmd.ExtraFiles = []*os.File{w}
	type result struct {
		stopped bool
		err     error
	}
	res := make(chan result, 1)
	go func() {
		_, stopped, err := groupRun(ctx, cmd)
		res <- result{stopped, err}
	}()
	line, err := bufio.NewReader(r).ReadString('\n')
	w.Close()
	child, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("no pid from the script: %q, %v", line, err)
	}
	// A pidfd, taken while the child surely lives, says when it exits
	// without polling and cannot name another process later.
	pidfd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(child), 0, 0)
	if errno != 0 {
		t.Fatalf("pidfd_open(%d): %v", child, errno)
	}
	defer syscall.Close(int(pidfd))
	cancel()
	got := <-res
	if !got.stopped || got.err == nil {
		t.Fatalf("groupRun: stopped %v, err %v; want it stopped", got.stopped, got.err)
	}
	// The group was killed before groupRun returned; a kill takes effect
	// at once, the bound only ends a failing test.
	var set syscall.FdSet
	set.Bits[pidfd/64] |= 1 << (pidfd % 64)
	tv := syscall.NsecToTimeval(int64(time.Minute))
	if n, err := syscall.Select(int(pidfd)+1, &set, nil, nil, &tv); err != nil || n != 1 {
		t.Fatalf("the group's background child %d outlived groupRun (select: %d, %v)", child, n, err)
	}
}

// sysPidfdOpen is pidfd_open(2), the same number on every Linux
// architecture.
const sysPidfdOpen = 434
