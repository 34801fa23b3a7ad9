package realworld

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/simlab/simlab/internal/headbuf"
	"github.com/simlab/simlab/internal/npminstall"
)

// NodeDir is the directory of the Node driver and its pinned packages.
func NodeDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "node")
}

// installHint is appended to every "cannot start" error: one line that says
// how to get what is missing.
const installHint = "install Node.js >= 20 with npm (e.g. apt-get install nodejs npm) or set SIMLAB_NO_REAL_WORLDS=1 to skip the real Worlds"

// pinned are the packages driver.mjs imports, by npm alias, with the exact
// version package.json pins.
var pinned = map[string]string{
	"wl-fixed": "5.0.0-beta.45",
	"wl-pre":   "5.0.0-beta.43",
	"wpg-pre":  "5.0.0-beta.27",
	"wl-b46":   "5.0.0-beta.46",
	"wpg-b29":  "5.0.0-beta.29",
}

// EnsurePackages installs the pinned packages into dir/node_modules unless
// every one is already there at its pinned version (a fresh clone has none; a
// second run costs a few file reads). It runs `npm install --no-save`, which
// installs exactly the committed package-lock.json: `npm ci` refuses that lock
// on npm 11, which leaves cbor-extract's optional platform packages out of the
// locks it writes and then reports them missing. The lock must come out of the
// install unchanged. npm's cache goes to cacheDir so nothing is written outside
// the checkout and the test's temporary directory.
func EnsurePackages(ctx context.Context, dir, cacheDir string) error {
	if installed(dir) && !npminstall.Unfinished(dir) {
		return nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return fmt.Errorf("npm not found on PATH: %s", installHint)
	}
	lock := filepath.Join(dir, "package-lock.json")
	before, err := os.ReadFile(lock)
	if err != nil {
		return fmt.Errorf("the pinned lock file is missing: %v", err)
	}
	out, err := npminstall.Run(ctx, dir, []string{"npm_config_cache=" + cacheDir, "npm_config_update_notifier=false"},
		"--no-save", "--legacy-peer-deps", "--no-audit", "--no-fund", "--loglevel=error")
	if err != nil {
		return fmt.Errorf("npm install in %s failed (%v): %s; %s", dir, err, firstLines(out, 4), installHint)
	}
	if after, _ := os.ReadFile(lock); !bytes.Equal(before, after) {
		_ = os.WriteFile(lock, before, 0o644)
		return fmt.Errorf("npm install in %s wanted to change package-lock.json (restored): the pins and the lock disagree", dir)
	}
	if !installed(dir) {
		return fmt.Errorf("npm install in %s left the pinned packages missing; %s", dir, installHint)
	}
	return nil
}

// Installed reports whether dir's node_modules holds every pinned World
// package at its pinned version (what EnsurePackages would install).
func Installed(dir string) bool { return installed(dir) }

func installed(dir string) bool {
	for alias, version := range pinned {
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", alias, "package.json"))
		if err != nil {
			return false
		}
		var p struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(b, &p) != nil || p.Version != version {
			return false
		}
	}
	return true
}

func firstLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// Driver is one long-lived driver.mjs process hosting one real World.
type Driver struct {
	World  string
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan string
	stderr *headbuf.Buffer
	done   chan struct{}
	closed sync.Once
}

// sequences numbers every sequence of the test process, so that run keys
// and step ids stay unique across drivers sharing one database.
var sequences atomic.Int64

// callTimeout bounds one call of a hung driver; real calls take milliseconds.
const callTimeout = 60 * time.Second

// StartDriver starts driver.mjs for world (a World's Name) with tmp as its
// working directory, HOME and data directory. env adds variables
// (WORKFLOW_POSTGRES_URL for world-postgres). The process runs in its own process
// group so Close can stop everything it started.
func StartDriver(world, tmp string, env ...string) (*Driver, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("node not found on PATH: %s", installHint)
	}
	cmd := exec.Command(node, filepath.Join(NodeDir(), "driver.mjs"), "--world", world, "--dir", tmp)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "HOME="+tmp, "TMPDIR="+tmp, "NODE_ENV=production")
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	d := &Driver{World: world, cmd: cmd, lines: make(chan string, 1), stderr: &headbuf.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = d.stderr
	if d.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the %s driver: %v; %s", world, err, installHint)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			d.lines <- sc.Text()
		}
		close(d.lines)
	}()
	go func() { _ = cmd.Wait(); close(d.done) }()
	return d, nil
}

// request is one line driver.mjs reads.
type request struct {
	Op              string `json:"op"`
	Run             string `json:"run,omitempty"`
	Type            string `json:"type,omitempty"`
	Step            string `json:"step,omitempty"`
	Lazy            bool   `json:"lazy,omitempty"`
	RetryAfterHours int    `json:"retry_after_hours,omitempty"`
	PeerRun         string `json:"peer_run,omitempty"`
	Hook            string `json:"hook,omitempty"`
	Token           string `json:"token,omitempty"`
}

func (d *Driver) do(req request) (Answer, error) {
	line, err := d.send(req)
	if err != nil {
		return Answer{}, err
	}
	var a Answer
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		b, _ := json.Marshal(req)
		return Answer{}, fmt.Errorf("%s driver: unreadable answer %q to %s: %v", d.World, line, b, err)
	}
	return a, nil
}

func (d *Driver) crashed(doing string) error {
	select {
	case <-d.done:
	case <-time.After(5 * time.Second):
	}
	state := "still running"
	if d.cmd.ProcessState != nil {
		state = d.cmd.ProcessState.String()
	}
	return fmt.Errorf("%s driver crashed while %s (%s); stderr:\n%s", d.World, doing, state, d.stderr.String())
}

// RealRun applies the calls of one sequence to the real World, one at a
// time, with runs and step ids the World has never seen (world-postgres keys
// steps globally, so ids are unique per driver).
type RealRun struct {
	d      *Driver
	prefix string
	// Hooks' correlation ids (hook_<ULID>) and tokens, minted on first use,
	// and each id's name in the sequence ("r0.h1").
	hookIDs  map[[2]int]string
	tokens   map[int]string
	hookName map[string]string
}

// Driver is the driver the sequence runs on.
func (r *RealRun) Driver() *Driver { return r.d }

// NewRun starts a sequence.
func (d *Driver) NewRun() *RealRun {
	return &RealRun{d: d, prefix: fmt.Sprintf("q%d", sequences.Add(1)),
		hookIDs: map[[2]int]string{}, tokens: map[int]string{}, hookName: map[string]string{}}
}

// hookKey is hook (run, hook)'s correlation id: hook_ and a ULID, as core
// mints them, fresh for every sequence (both Worlds key hooks by the id
// alone).
func (r *RealRun) hookKey(run, hook int) string {
	k := [2]int{run, hook}
	if id, ok := r.hookIDs[k]; ok {
		return id
	}
	id := "hook_" + newULID()
	r.hookIDs[k] = id
	r.hookName[id] = fmt.Sprintf("r%d.h%d", run, hook)
	return id
}

// tokenKey is token index t's token, one string for every run of the
// sequence and none other's.
func (r *RealRun) tokenKey(t int) string {
	if s, ok := r.tokens[t]; ok {
		return s
	}
	s := fmt.Sprintf("tok_%s_t%d_%s", r.prefix, t, strings.ToLower(newULID()[16:]))
	r.tokens[t] = s
	return s
}

// hookNameOf maps a correlation id the World answered back to its name in
// the sequence; one the sequence did not mint stays as it is, marked.
func (r *RealRun) hookNameOf(id string) string {
	if id == "" || strings.HasPrefix(id, "unreadable") {
		return id
	}
	if n, ok := r.hookName[id]; ok {
		return n
	}
	return "foreign:" + id
}

// Apply sends one call and returns the real answer and read-back.
func (r *RealRun) Apply(c Call) (Answer, error) {
	d := r.d
	req := request{Op: c.Op, Run: fmt.Sprintf("%s_r%d", r.prefix, c.Run), Type: c.Type, Lazy: c.Lazy, RetryAfterHours: c.RetryAfterHours}
	if c.Op == "event" && StepEvent(c.Type) {
		// A step id reused in another run (StepRun) is the same string.
		req.Step = fmt.Sprintf("step_%s_r%d_s%d", r.prefix, c.IDRun(), c.Step)
		if c.StepRun != nil {
			req.PeerRun = fmt.Sprintf("%s_r%d", r.prefix, *c.StepRun)
		}
	}
	if c.Op == "event" && HookEvent(c.Type) {
		req.Hook, req.Token = r.hookKey(c.Run, c.Hook), r.tokenKey(c.Token)
	}
	a, err := d.do(req)
	if err == nil && a.Res == "other" {
		err = fmt.Errorf("%s driver: %s answered %q, which is none of the World's error classes; stderr:\n%s", d.World, c, a.Msg, d.stderr.String())
	}
	if err == nil && req.Hook != "" {
		a.Owner = r.hookNameOf(a.Owner)
		if a.HookLog == nil {
			a.HookLog = []string{}
		}
	}
	return a, err
}

// Run applies a whole sequence to the real World.
func (d *Driver) Run(calls []Call) ([]Answer, error) {
	r := d.NewRun()
	out := make([]Answer, 0, len(calls))
	for _, c := range calls {
		a, err := r.Apply(c)
		if err != nil {
			return out, err
		}
		out = append(out, a)
	}
	return out, nil
}

// Close asks the driver to quit and stops its process group, by its own pid,
// if it does not within a few seconds. Closing twice does nothing.
func (d *Driver) Close() error {
	d.closed.Do(func() {
		_ = json.NewEncoder(d.in).Encode(request{Op: "quit"})
		_ = d.in.Close()
		select {
		case <-d.done:
			return
		case <-time.After(10 * time.Second):
		}
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
	})
	return nil
}

// Postgres is a throwaway PostgreSQL cluster: its own directory, a free port
// on 127.0.0.1, its socket in that directory.
type Postgres struct {
	Dir  string
	Port int
	pid  int
}

// pgHint is the one line naming how to get PostgreSQL.
const pgHint = "install PostgreSQL 15 (initdb, pg_ctl on PATH, e.g. apt-get install postgresql) or set SIMLAB_NO_REAL_WORLDS=1 to skip the real Worlds"

// StartPostgres creates and starts a cluster in a fresh directory. As root it
// runs initdb and the server as the postgres user (initdb refuses root) and
// gives that user the directory. Stop it with Stop, which also removes the
// directory.
func StartPostgres() (*Postgres, error) {
	initdb, err := exec.LookPath("initdb")
	if err != nil {
		return nil, fmt.Errorf("initdb not found on PATH: %s", pgHint)
	}
	pgctl, err := exec.LookPath("pg_ctl")
	if err != nil {
		return nil, fmt.Errorf("pg_ctl not found on PATH: %s", pgHint)
	}
	dir, err := os.MkdirTemp("", "simlab-pg-")
	if err != nil {
		return nil, err
	}
	p := &Postgres{Dir: dir}
	var as []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root and there is no postgres user to run initdb as: %s", pgHint)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		as = []string{"runuser", "-u", "postgres", "--"}
	}
	run := func(args ...string) ([]byte, error) {
		args = append(append([]string(nil), as...), args...)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir, "LC_ALL=C")
		return cmd.CombinedOutput()
	}
	data := filepath.Join(dir, "data")
	if out, err := run(initdb, "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb failed (%v): %s; %s", err, lastLines(out, 5), pgHint)
	}
	// A free port can be taken by someone else before the server binds it:
	// try a few.
	var out []byte
	for try := 0; ; try++ {
		if p.Port, err = freePort(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -k %s -c fsync=off", p.Port, dir)
		if out, err = run(pgctl, "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start"); err == nil {
			break
		}
		// A server that left a pid file did start: no retry, stop it.
		if _, statErr := os.Stat(filepath.Join(data, "postmaster.pid")); statErr == nil || try == 2 {
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			_ = p.readPid()
			p.Stop()
			return nil, fmt.Errorf("pg_ctl start failed (%v): %s %s; %s", err, lastLines(out, 3), lastLines(log, 5), pgHint)
		}
	}
	if err := p.readPid(); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// readPid reads the postmaster's pid from its pid file: Stop kills that pid.
func (p *Postgres) readPid() error {
	b, err := os.ReadFile(filepath.Join(p.Dir, "data", "postmaster.pid"))
	if err != nil {
		return fmt.Errorf("postgres started but left no postmaster.pid: %v", err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	p.pid, err = strconv.Atoi(strings.TrimSpace(first))
	return err
}

// URL is the connection string of the cluster's postgres database.
func (p *Postgres) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres", p.Port)
}

// Stop shuts the server down by its pid (fast shutdown, then SIGKILL if it
// lingers) and removes its directory. Safe to call twice.
func (p *Postgres) Stop() {
	if p.pid > 0 {
		_ = syscall.Kill(p.pid, syscall.SIGINT)
		deadline := time.Now().Add(15 * time.Second)
		for alive(p.pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if alive(p.pid) {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		p.pid = 0
	}
	if p.Dir != "" {
		_ = os.RemoveAll(p.Dir)
		p.Dir = ""
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Migrate applies the migrations of the world-postgres package installed as
// alias (wpg-pre, wpg-b29: its own bin/setup.js) to the cluster, with tmp as
// the working directory and HOME.
func Migrate(p *Postgres, alias, tmp string) error {
	return MigrateWith(p, filepath.Join(NodeDir(), "node_modules", alias), tmp)
}

// MigrateWith applies the migrations of the world-postgres package installed
// in pkgDir (another project's node_modules: the engine's) as Migrate does.
func MigrateWith(p *Postgres, pkgDir, tmp string) error {
	alias := filepath.Base(pkgDir)
	pkgDir, err := filepath.Abs(pkgDir) // the command runs in tmp
	if err != nil {
		return err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return fmt.Errorf("node not found on PATH: %s", installHint)
	}
	cmd := exec.Command(node, filepath.Join(pkgDir, "bin", "setup.js"))
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "HOME="+tmp, "WORKFLOW_POSTGRES_URL="+p.URL())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s setup.js failed (%v): %s", alias, err, lastLines(out, 8))
	}
	return nil
}
