package bounded

import (
	"fmt"
	"io"
	"os"
)

// TooLargeError is a file longer than its limit. Its text leaves the path
// to the caller's prefix ("scenario file x.yaml: larger than 1 MiB, ...").
type TooLargeError struct {
	Path  string
	Limit int64
	What  string // what the file should be, e.g. "a scenario file"
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("larger than %s, the most %s may hold", Size(e.Limit), e.What)
}

// ReadFile is os.ReadFile that reads at most limit bytes: a longer file,
// or one that never ends, is a *TooLargeError once limit+1 bytes are read.
// what names the kind of file for the error.
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path, limit, what)
}

// Read reads all of r, at most limit bytes; name is what errors call it.
func Read(r io.Reader, name string, limit int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: name, Limit: limit, What: what}
	}
	return data, nil
}

// Size writes a byte count as people read it: 1 MiB, 256 MiB, 1 GiB.
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
