//go:build !linux

package realengine

import "syscall"

// procAttr puts the harness in its own process group, killed as a group.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
