// Package trust keeps the user's record of the project files they trusted
// (`jlgcli trust`), the way direnv's allow and mise's trust do: each file's
// absolute path with the SHA-256 of the content the user saw. A file is
// trusted only while both match, so any change of it, by anyone, takes
// the trust away until the user gives it again. The record is one JSON
// file in the user's configuration directory, replaced whole
// (durable.WriteFile) under a lock, one entry per path.
package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jlgcli/jlgcli/internal/durable"
)

// FileName is the record's name, beside the user's config.toml.
const FileName = "trusted.json"

// Sum is the SHA-256 of a file's content, in hex.
func Sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// Entry is one trusted file: its absolute path, the SHA-256 of the content
// trusted, and when.
type Entry struct {
	Path   string    `json:"path"`
	SHA256 string    `json:"sha256"`
	At     time.Time `json:"trustedAt"`
}

// record is the file's content.
type record struct {
	Files []Entry `json:"files"`
}

// Store is the record kept in the file Path ("": no place for one, HOME
// and XDG_CONFIG_HOME unset: nothing is trusted, and nothing can be).
type Store struct{ Path string }

// Error is a record that cannot be read or written, naming its file (and
// the line, when a parser knows it).
type Error struct {
	File string
	Line int
	Err  error
}

func (e *Error) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, e.Line)
	}
	return where + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNoPlace is the error of a trust given when there is no configuration
// directory to keep it in.
var ErrNoPlace = errors.New("no configuration directory to keep the trusted files in: set HOME or XDG_CONFIG_HOME")

// Abs is the path under which a file is trusted: absolute and clean, its
// symbolic links left as they are (a link made elsewhere to a trusted file
// is another path, not trusted).
func Abs(path string) (string, error) { return filepath.Abs(path) }

// List is every trusted file, by path.
func (s Store) List() ([]Entry, error) {
	r, err := s.read()
	return r.Files, err
}

// Trusts tells whether the file at path is trusted with the content whose
// SHA-256 is sum.
func (s Store) Trusts(path, sum string) (bool, error) {
	if s.Path == "" {
		return false, nil
	}
	path, err := Abs(path)
	if err != nil {
		return false, err
	}
	r, err := s.read()
	if err != nil {
		return false, err
	}
	for _, e := range r.Files {
		if e.Path == path {
			return e.SHA256 == sum, nil
		}
	}
	return false, nil
}

// Add trusts the file at path with the content whose SHA-256 is sum, at
// time at, in place of what was trusted there before; before is that
// entry (nil: none).
func (s Store) Add(path, sum string, at time.Time) (before *Entry, err error) {
	path, err = Abs(path)
	if err != nil {
		return nil, err
	}
	if !validSum(sum) {
		return nil, fmt.Errorf("%q is not a SHA-256 in hex", sum)
	}
	err = s.update(func(r *record) {
		if i := r.find(path); i >= 0 {
			e := r.Files[i]
			before = &e
			r.Files = slices.Delete(r.Files, i, i+1)
		}
		r.Files = append(r.Files, Entry{Path: path, SHA256: sum, At: at.UTC().Truncate(time.Second)})
	})
	return before, err
}

// Remove takes the trust of the file at path away; removed is the entry
// it had (nil: none).
func (s Store) Remove(path string) (removed *Entry, err error) {
	path, err = Abs(path)
	if err != nil {
		return nil, err
	}
	err = s.update(func(r *record) {
		if i := r.find(path); i >= 0 {
			e := r.Files[i]
			removed = &e
			r.Files = slices.Delete(r.Files, i, i+1)
		}
	})
	return removed, err
}

func (r *record) find(path string) int {
	return slices.IndexFunc(r.Files, func(e Entry) bool { return e.Path == path })
}

// read reads the record; a missing file is an empty record.
func (s Store) read() (record, error) {
	if s.Path == "" {
		return record{}, nil
	}
	data, err := os.ReadFile(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		return record{}, nil
	}
	if err != nil {
		return record{}, &Error{File: s.Path, Err: err}
	}
	return parse(s.Path, data)
}

// parse reads a record, refusing what jlgcli would not have written.
func parse(file string, data []byte) (record, error) {
	var r record
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		e := &Error{File: file, Err: fmt.Errorf("not a record of trusted files: %w", err)}
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			e.Line = lineAt(data, se.Offset)
		case errors.As(err, &te):
			e.Line = lineAt(data, te.Offset)
		}
		return record{}, e
	}
	if dec.More() {
		return record{}, &Error{File: file, Err: errors.New("not a record of trusted files: more than one JSON value")}
	}
	seen := map[string]bool{}
	for i, e := range r.Files {
		switch {
		case !filepath.IsAbs(e.Path) || filepath.Clean(e.Path) != e.Path:
			return record{}, &Error{File: file, Err: fmt.Errorf("files[%d]: path %q is not an absolute, clean path", i, e.Path)}
		case !validSum(e.SHA256):
			return record{}, &Error{File: file, Err: fmt.Errorf("files[%d]: sha256 %q is not a SHA-256 in hex", i, e.SHA256)}
		case seen[e.Path]:
			return record{}, &Error{File: file, Err: fmt.Errorf("files[%d]: %s is there twice", i, e.Path)}
		}
		seen[e.Path] = true
	}
	return r, nil
}

// lineAt is the line of data's byte offset, from 1.
func lineAt(data []byte, offset int64) int {
	offset = min(max(offset, 0), int64(len(data)))
	return 1 + bytes.Count(data[:offset], []byte{'\n'})
}

func validSum(s string) bool {
	if len(s) != sha256.Size*2 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// update changes the record with change, under an exclusive lock of its
// directory's lock file so that two jlgcli trusting at once lose neither
// trust, and replaces it whole.
func (s Store) update(change func(*record)) error {
	if s.Path == "" {
		return ErrNoPlace
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		return &Error{File: s.Path, Err: err}
	}
	lock, err := os.OpenFile(s.Path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return &Error{File: s.Path, Err: err}
	}
	defer lock.Close() // and with it the lock
	if err := flock(lock); err != nil {
		return &Error{File: s.Path + ".lock", Err: err}
	}
	r, err := s.read()
	if err != nil {
		return err
	}
	change(&r)
	slices.SortFunc(r.Files, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	if r.Files == nil {
		r.Files = []Entry{}
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := durable.WriteFile(s.Path, append(data, '\n')); err != nil {
		return &Error{File: s.Path, Err: err}
	}
	return nil
}

// flock takes an exclusive lock of f, waiting for it.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
