//go:build !linux

package procgroup

import "syscall"

// attr puts the child in its own process group, killed as a group.
func attr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
