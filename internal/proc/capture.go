package proc

import (
	"bytes"
	"sync"
)

// Tail is an io.Writer that keeps only the last Limit bytes written to it, so
// that an agent printing gigabytes cannot exhaust memory. It is safe for
// concurrent use.
type Tail struct {
	limit int
	mu    sync.Mutex
	buf   []byte
	total int64
}

// NewTail returns a Tail keeping at most limit bytes.
func NewTail(limit int) *Tail { return &Tail{limit: limit} }

// Write keeps the tail of p and always reports it all written. The buffer
// grows to twice the limit before its tail is moved to the front, so each
// byte is copied a bounded number of times however much is written.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	if len(p) >= t.limit {
		t.buf = append(t.buf[:0], p[len(p)-t.limit:]...)
		return len(p), nil
	}
	if len(t.buf)+len(p) > 2*t.limit {
		keep := t.limit - len(p)
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-keep:]...)
	}
	t.buf = append(t.buf, p...)
	return len(p), nil
}

// tail is the kept part of buf: its last limit bytes.
func (t *Tail) tail() []byte {
	if len(t.buf) > t.limit {
		return t.buf[len(t.buf)-t.limit:]
	}
	return t.buf
}

// Bytes returns a copy of the kept tail.
func (t *Tail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.tail())
}

// String returns the kept tail as a string.
func (t *Tail) String() string { return string(t.Bytes()) }

// Total is the number of bytes written, kept or not.
func (t *Tail) Total() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// Truncated reports whether bytes were dropped from the front.
func (t *Tail) Truncated() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total > int64(len(t.tail()))
}

// Lines is an io.Writer that calls Fn with each complete line written to it
// (without its newline). A line longer than Max bytes is cut to its first Max
// bytes, and the rest of it is skipped, so memory stays bounded. Call Flush
// after the last write to deliver a final line that has no newline.
type Lines struct {
	Max int
	Fn  func(line []byte, cut bool)

	mu   sync.Mutex
	buf  []byte
	skip bool // in the part of a long line beyond Max
}

// Write splits p into lines.
func (l *Lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !l.skip {
			room := l.Max - len(l.buf)
			if len(chunk) > room {
				l.buf = append(l.buf, chunk[:room]...)
				l.skip = true
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		if i < 0 {
			break
		}
		l.emit()
		p = p[i+1:]
	}
	return n, nil
}

func (l *Lines) emit() {
	line := bytes.TrimSuffix(l.buf, []byte{'\r'})
	l.Fn(line, l.skip)
	l.buf = l.buf[:0]
	l.skip = false
}

// Flush delivers a last line that had no newline.
func (l *Lines) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 || l.skip {
		l.emit()
	}
}
