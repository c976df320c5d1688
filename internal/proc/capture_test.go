package proc

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestTailKeepsEverythingUnderTheLimit(t *testing.T) {
	tail := NewTail(16)
	tail.Write([]byte("hello "))
	tail.Write([]byte("world"))
	if got := tail.String(); got != "hello world" {
		t.Errorf("String() = %q", got)
	}
	if tail.Truncated() || tail.Total() != 11 {
		t.Errorf("Truncated %v, Total %d; want false, 11", tail.Truncated(), tail.Total())
	}
}

func TestTailExactlyAtTheLimit(t *testing.T) {
	tail := NewTail(5)
	tail.Write([]byte("ab"))
	tail.Write([]byte("cde"))
	if got := tail.String(); got != "abcde" || tail.Truncated() {
		t.Errorf("String() = %q, Truncated %v; want abcde, false", got, tail.Truncated())
	}
	tail.Write([]byte("f"))
	if got := tail.String(); got != "bcdef" || !tail.Truncated() {
		t.Errorf("String() = %q, Truncated %v; want bcdef, true", got, tail.Truncated())
	}
}

func TestTailKeepsTheLastBytes(t *testing.T) {
	for _, chunk := range []int{1, 3, 7, 10, 64, 1000} {
		t.Run(fmt.Sprint(chunk), func(t *testing.T) {
			const limit = 100
			tail := NewTail(limit)
			var all bytes.Buffer
			for i := 0; all.Len() < 5000; i++ {
				p := []byte(strings.Repeat(string(rune('a'+i%26)), chunk))
				p[0] = byte('0' + i%10)
				n, err := tail.Write(p)
				if n != len(p) || err != nil {
					t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(p))
				}
				all.Write(p)
			}
			want := all.Bytes()[all.Len()-limit:]
			if got := tail.Bytes(); !bytes.Equal(got, want) {
				t.Errorf("Bytes() = %q, want %q", got, want)
			}
			if !tail.Truncated() || tail.Total() != int64(all.Len()) {
				t.Errorf("Truncated %v, Total %d; want true, %d", tail.Truncated(), tail.Total(), all.Len())
			}
		})
	}
}

func TestTailWriteLargerThanTheLimit(t *testing.T) {
	tail := NewTail(4)
	tail.Write([]byte("ab"))
	tail.Write([]byte("0123456789"))
	if got := tail.String(); got != "6789" {
		t.Errorf("String() = %q, want 6789", got)
	}
	tail.Write([]byte("x"))
	if got := tail.String(); got != "789x" {
		t.Errorf("String() = %q, want 789x", got)
	}
}

func TestTailBytesIsACopy(t *testing.T) {
	tail := NewTail(8)
	tail.Write([]byte("abc"))
	b := tail.Bytes()
	b[0] = 'X'
	if got := tail.String(); got != "abc" {
		t.Errorf("changing Bytes() changed the tail: %q", got)
	}
}

func TestTailZeroLimitKeepsNothing(t *testing.T) {
	tail := NewTail(0)
	if n, err := tail.Write([]byte("abc")); n != 3 || err != nil {
		t.Errorf("Write = %d, %v", n, err)
	}
	if tail.String() != "" || !tail.Truncated() || tail.Total() != 3 {
		t.Errorf("String %q, Truncated %v, Total %d", tail.String(), tail.Truncated(), tail.Total())
	}
}

// TestTailBoundedMemory writes 64 MiB in small pieces, as an agent flooding
// its output line by line does: the tail keeps its limit, its buffer stays
// within a small multiple of it, and the writes do not each copy the whole
// tail (which made such a flood take hours).
func TestTailBoundedMemory(t *testing.T) {
	const limit = 4 << 20
	tail := NewTail(limit)
	done := make(chan struct{})
	line := []byte(strings.Repeat("z", 99) + "\n")
	go func() {
		defer close(done)
		for i := 0; i < (64<<20)/len(line); i++ {
			tail.Write(line)
		}
	}()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatal("64 MiB of small writes did not end: a write costs in proportion to the limit")
	}
	tail.mu.Lock()
	c := cap(tail.buf)
	tail.mu.Unlock()
	// The buffer grows to twice the limit before its tail is moved to the
	// front (append may round that up): bounded by the limit, not by the
	// 64 MiB written.
	if c > 3*limit {
		t.Errorf("the tail holds a buffer of %d bytes for a limit of %d", c, limit)
	}
	got := tail.Bytes()
	if len(got) != limit || !bytes.Equal(got[len(got)-len(line):], line) || !tail.Truncated() {
		t.Errorf("kept %d bytes ending %q, truncated %v", len(got), got[max(0, len(got)-10):], tail.Truncated())
	}
}

func TestTailConcurrentWrites(t *testing.T) {
	tail := NewTail(1000)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				tail.Write([]byte("0123456789"))
				_ = tail.String()
			}
		}()
	}
	wg.Wait()
	if tail.Total() != 8*1000*10 || len(tail.Bytes()) != 1000 {
		t.Errorf("Total %d, kept %d", tail.Total(), len(tail.Bytes()))
	}
	if got := tail.String(); got != strings.Repeat("0123456789", 100) {
		t.Errorf("interleaved writes were torn: %q", got[:50])
	}
}

type lineRec struct {
	line string
	cut  bool
}

func collect(max int) (*Lines, *[]lineRec) {
	var got []lineRec
	return &Lines{Max: max, Fn: func(line []byte, cut bool) {
		got = append(got, lineRec{string(line), cut})
	}}, &got
}

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		name   string
		max    int
		writes []string
		flush  bool
		want   []lineRec
	}{
		{"one line", 100, []string{"hello\n"}, false, []lineRec{{"hello", false}}},
		{"split across writes", 100, []string{"hel", "lo\nwor", "ld\n"}, false, []lineRec{{"hello", false}, {"world", false}}},
		{"several in one write", 100, []string{"a\nb\nc\n"}, false, []lineRec{{"a", false}, {"b", false}, {"c", false}}},
		{"empty lines", 100, []string{"\n\nx\n"}, false, []lineRec{{"", false}, {"", false}, {"x", false}}},
		{"no newline waits for Flush", 100, []string{"a\npartial"}, false, []lineRec{{"a", false}}},
		{"Flush gives the last line", 100, []string{"a\npartial"}, true, []lineRec{{"a", false}, {"partial", false}}},
		{"Flush with nothing pending", 100, []string{"a\n"}, true, []lineRec{{"a", false}}},
		{"Flush of nothing at all", 100, nil, true, nil},
		{"CRLF", 100, []string{"one\r\ntwo\r\n"}, false, []lineRec{{"one", false}, {"two", false}}},
		{"CRLF split between writes", 100, []string{"one\r", "\ntwo\r", "\n"}, false, []lineRec{{"one", false}, {"two", false}}},
		{"CR inside a line is kept", 100, []string{"a\rb\n"}, false, []lineRec{{"a\rb", false}}},
		{"CRLF at Flush", 100, []string{"last\r"}, true, []lineRec{{"last", false}}},
		{"exactly Max is not cut", 5, []string{"abcde\n"}, false, []lineRec{{"abcde", false}}},
		{"over Max is cut", 5, []string{"abcdefgh\nok\n"}, false, []lineRec{{"abcde", true}, {"ok", false}}},
		{"cut across writes", 5, []string{"abc", "def", "ghi", "jkl\nok\n"}, false, []lineRec{{"abcde", true}, {"ok", false}}},
		{"cut line at Flush", 5, []string{"abcdefgh"}, true, []lineRec{{"abcde", true}}},
		{"cut exactly at the newline", 3, []string{"abc", "d", "\n"}, false, []lineRec{{"abc", true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, got := collect(tc.max)
			for _, w := range tc.writes {
				if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if tc.flush {
				l.Flush()
			}
			if fmt.Sprint(*got) != fmt.Sprint(tc.want) {
				t.Errorf("got %+v, want %+v", *got, tc.want)
			}
		})
	}
}

// TestLinesBoundedMemory feeds a 64 MiB line without a newline: the buffer
// never grows past Max.
func TestLinesBoundedMemory(t *testing.T) {
	const max = 1 << 20
	l, got := collect(max)
	chunk := bytes.Repeat([]byte("q"), 32<<10)
	for i := 0; i < (64<<20)/len(chunk); i++ {
		l.Write(chunk)
		if cap(l.buf) > 2*max {
			t.Fatalf("after %d bytes the line buffer holds %d bytes, over twice Max", (i+1)*len(chunk), cap(l.buf))
		}
	}
	l.Write([]byte("\nnext\n"))
	if len(*got) != 2 || len((*got)[0].line) != max || !(*got)[0].cut || (*got)[1] != (lineRec{"next", false}) {
		t.Errorf("got %d lines, first of %d bytes", len(*got), len((*got)[0].line))
	}
}

func TestLinesFlushTwice(t *testing.T) {
	l, got := collect(10)
	l.Write([]byte("x"))
	l.Flush()
	l.Flush()
	if len(*got) != 1 {
		t.Errorf("two Flushes gave %d lines, want 1", len(*got))
	}
}
