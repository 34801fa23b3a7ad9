package procgroup

import (
	"os/exec"
	"syscall"
	"time"
)

// Isolate makes cmd start in its own process group (and, on Linux, die
// with simlab): for a child without a context, stopped by its owner.
func Isolate(cmd *exec.Cmd) { cmd.SysProcAttr = attr() }

// Set makes cmd (made with exec.CommandContext) start in its own process
// group, and kills the whole group when the context ends.
func Set(cmd *exec.Cmd) {
	Isolate(cmd)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
}

// Kill kills what is left of cmd's group once cmd has ended (a child it
// started and did not wait for).
func Kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
