package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var at = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// A file is trusted with the content trusted; a change of it, by anyone,
// is not; trusting it again replaces the old entry (one per path), and
// removing takes the trust away.
func TestTrustedChangedRemoved(t *testing.T) {
	dir := t.TempDir()
	s := Store{Path: filepath.Join(dir, "cfg", FileName)}
	file := filepath.Join(dir, "repo", "jlgcli.toml")
	one, two := Sum([]byte("a = 1\n")), Sum([]byte("a = 2\n"))

	if ok, err := s.Trusts(file, one); ok || err != nil {
		t.Fatalf("before any trust: %v, %v", ok, err)
	}
	if before, err := s.Add(file, one, at); before != nil || err != nil {
		t.Fatalf("Add: %v, %v", before, err)
	}
	if ok, err := s.Trusts(file, one); !ok || err != nil {
		t.Errorf("trusted: %v, %v", ok, err)
	}
	if ok, _ := s.Trusts(file, two); ok {
		t.Error("a changed file is trusted")
	}
	if ok, _ := s.Trusts(filepath.Join(dir, "other", "jlgcli.toml"), one); ok {
		t.Error("the same content at another path is trusted")
	}
	// A relative path is the same file.
	t.Chdir(filepath.Join(dir))
	if ok, _ := s.Trusts(filepath.Join("repo", "..", "repo", "jlgcli.toml"), one); !ok {
		t.Error("the file named relatively is not trusted")
	}

	before, err := s.Add(file, two, at.Add(time.Hour))
	if err != nil || before == nil || before.SHA256 != one {
		t.Fatalf("Add of the changed file: %+v, %v", before, err)
	}
	if ok, _ := s.Trusts(file, one); ok {
		t.Error("the old content is still trusted")
	}
	if ok, _ := s.Trusts(file, two); !ok {
		t.Error("the new content is not trusted")
	}
	list, err := s.List()
	if err != nil || len(list) != 1 || list[0].Path != file || list[0].SHA256 != two || !list[0].At.Equal(at.Add(time.Hour)) {
		t.Fatalf("List: %+v, %v", list, err)
	}

	removed, err := s.Remove(file)
	if err != nil || removed == nil || removed.SHA256 != two {
		t.Fatalf("Remove: %+v, %v", removed, err)
	}
	if ok, _ := s.Trusts(file, two); ok {
		t.Error("a removed file is trusted")
	}
	if removed, err := s.Remove(file); removed != nil || err != nil {
		t.Errorf("Remove again: %+v, %v", removed, err)
	}
	if _, err := os.Stat(s.Path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("a temporary file is left: %v", err)
	}
}

// A record jlgcli did not write is an error naming the file (and the
// line when the JSON parser knows it), never "not trusted" nor "trusted".
func TestCorruptRecord(t *testing.T) {
	good := Sum(nil)
	for _, tc := range []struct{ name, content, want string }{
		{"syntax", "{\n  \"files\": [\n    {\"path\": \"/a/jlgcli.toml\",,}\n", ":3: not a record of trusted files"},
		{"type", "{\"files\": {\"path\": 1}}", ":1: not a record of trusted files"},
		{"unknown field", "{\"files\": [], \"all\": true}", "unknown field"},
		{"relative path", "{\"files\": [{\"path\": \"a/jlgcli.toml\", \"sha256\": \"" + good + "\"}]}", "files[0]: path \"a/jlgcli.toml\" is not an absolute, clean path"},
		{"bad sum", "{\"files\": [{\"path\": \"/a/jlgcli.toml\", \"sha256\": \"abc\"}]}", "files[0]: sha256 \"abc\" is not a SHA-256 in hex"},
		{"twice", "{\"files\": [{\"path\": \"/a\", \"sha256\": \"" + good + "\"}, {\"path\": \"/a\", \"sha256\": \"" + good + "\"}]}", "files[1]: /a is there twice"},
		{"two values", "{\"files\": []} {}", "more than one JSON value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Store{Path: filepath.Join(t.TempDir(), FileName)}
			if err := os.WriteFile(s.Path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			ok, err := s.Trusts("/a/jlgcli.toml", good)
			var te *Error
			if ok || !errors.As(err, &te) || te.File != s.Path || !strings.HasPrefix(err.Error(), s.Path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Trusts: %v, %v; want an error of %s with %q", ok, err, s.Path, tc.want)
			}
			if _, err := s.Add("/b/jlgcli.toml", good, at); !errors.As(err, &te) {
				t.Errorf("Add over a corrupt record: %v", err)
			}
			if data, _ := os.ReadFile(s.Path); string(data) != tc.content {
				t.Errorf("the corrupt record was rewritten: %q", data)
			}
		})
	}
}

// Without a configuration directory nothing is trusted, and a trust
// cannot be given.
func TestNoPlace(t *testing.T) {
	var s Store
	if ok, err := s.Trusts("/a/jlgcli.toml", Sum(nil)); ok || err != nil {
		t.Errorf("Trusts: %v, %v", ok, err)
	}
	if _, err := s.Add("/a/jlgcli.toml", Sum(nil), at); !errors.Is(err, ErrNoPlace) {
		t.Errorf("Add: %v", err)
	}
}

// Trusts given at once are all kept.
func TestConcurrentAdds(t *testing.T) {
	dir := t.TempDir()
	s := Store{Path: filepath.Join(dir, FileName)}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if _, err := s.Add(filepath.Join(dir, string(rune('a'+i)), "jlgcli.toml"), Sum([]byte{byte(i)}), at); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	list, err := s.List()
	if err != nil || len(list) != 8 {
		t.Fatalf("List: %d entries, %v", len(list), err)
	}
	for i := 1; i < len(list); i++ {
		if list[i-1].Path >= list[i].Path {
			t.Errorf("not sorted by path: %s before %s", list[i-1].Path, list[i].Path)
		}
	}
}

// A bad sum is refused before anything is written.
func TestAddRefusesBadSum(t *testing.T) {
	s := Store{Path: filepath.Join(t.TempDir(), FileName)}
	if _, err := s.Add("/a/jlgcli.toml", "ABC", at); err == nil {
		t.Fatal("no error")
	}
	if _, err := os.Stat(s.Path); !os.IsNotExist(err) {
		t.Errorf("the record was written: %v", err)
	}
}
