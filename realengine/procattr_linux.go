package realengine

import "syscall"

// procAttr puts the harness in its own process group (killed as a group)
// and has the kernel kill it if simlab dies first (a broken pipe, a kill),
// so no Node process outlives the command.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
