package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// wrapTraceWriter lets a test stand between the trace writer and the file,
// for example to make it behave like a full device; in the product it is
// the identity.
var wrapTraceWriter = func(w io.Writer) io.Writer { return w }

// writeOutput writes what write produces to path, the way a user who names
// path expects:
//
//   - "-" is stdout;
//   - a new path or an existing regular file is written to a temporary file
//     beside it and renamed into place, so a reader never sees half a file
//     and a failed write leaves the old file as it was;
//   - anything else (a symlink, a FIFO, a device such as /dev/stdout or
//     /dev/null) is opened and written through, never replaced: renaming
//     over it would cut the link, starve the FIFO's reader, or, as root,
//     turn /dev/null into a regular file.
//
// Errors name path, never the temporary file.
func writeOutput(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "-" {
		return userPathError(path, writeBuffered(wrapTraceWriter(stdout), write))
	}
	st, err := os.Lstat(path)
	switch {
	case err == nil && st.Mode().IsRegular() && !writable(path, st):
		// Renaming over a file needs only the directory's permission; a
		// shell's > would be refused, and so is this.
		return fmt.Errorf("%s is read-only (mode %v): make it writable (chmod u+w) or name another file", path, st.Mode().Perm())
	case errors.Is(err, fs.ErrNotExist) || err == nil && st.Mode().IsRegular():
		return userPathError(path, writeReplacing(path, write))
	case err != nil:
		return userPathError(path, err)
	case st.IsDir():
		return fmt.Errorf("%s is a directory: name a file in it, for example %s", path, filepath.Join(path, "trace.jsonl"))
	}
	// O_CREATE for a symlink whose target does not exist yet, as a shell's
	// > would; devices and FIFOs exist already.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return userPathError(path, err)
	}
	werr := writeBuffered(wrapTraceWriter(f), write)
	cerr := f.Close()
	return userPathError(path, errors.Join(werr, cerr))
}

// writable says the user may write the regular file path: it has a write
// bit (root, whom permissions do not stop, is held to that too) and the
// system grants this user write access.
func writable(path string, st fs.FileInfo) bool {
	return st.Mode().Perm()&0o222 != 0 && syscall.Access(path, 2 /* W_OK */) == nil
}

// writeReplacing writes through a temporary file in path's directory and
// renames it over path.
func writeReplacing(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := writeBuffered(wrapTraceWriter(tmp), write); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// CreateTemp makes the file private; a trace is meant to be shared.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func writeBuffered(w io.Writer, write func(io.Writer) error) error {
	bw := bufio.NewWriter(w)
	if err := write(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// userPathError says what went wrong with path in the user's terms: the
// operating system's reason ("no space left on device") without the
// operation and the file name Go's errors carry, which may be an internal
// temporary file.
func userPathError(path string, err error) error {
	if err == nil {
		return nil
	}
	var errno syscall.Errno
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &errno):
		// The system's reason, whichever layer wrapped it.
		err = errno
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	if errors.Is(err, fs.ErrNotExist) {
		if st, serr := os.Stat(filepath.Dir(path)); serr == nil && st.IsDir() {
			// The directory is there: the file is what is missing (a read).
			return fmt.Errorf("%s: no such file", path)
		}
		return fmt.Errorf("%s: the directory %s does not exist: create it or name another file", path, filepath.Dir(path))
	}
	return fmt.Errorf("%s: %w", path, err)
}
