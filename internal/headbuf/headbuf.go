package headbuf

import (
	"bytes"
	"sync"
)

// Limit is how much a Buffer keeps: a crash report needs no more.
const Limit = 64 << 10

// Buffer keeps the first Limit bytes written to it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write keeps what fits and reports the whole write as done, so a chatty
// process is never blocked or failed by a full buffer.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > Limit {
		return len(p), nil
	}
	return l.b.Write(p)
}

// String is what was kept.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
