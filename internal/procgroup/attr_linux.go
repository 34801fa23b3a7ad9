package procgroup

import "syscall"

// attr puts the child in its own process group (killed as a group)
// and has the kernel kill it if simlab dies first (a broken pipe, a kill),
// so no Node process outlives the command.
func attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
