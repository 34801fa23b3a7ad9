// Package headbuf is a child process's stderr kept for an error report: safe
// to write from the process's copying goroutine while another reads it, and
// bounded, keeping the head.
package headbuf
