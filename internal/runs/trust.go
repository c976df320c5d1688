package runs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/trust"
)

// Trusted is a project file that the user trusted (Trust): what it runs or
// sends outside the sandbox once trusted, each setting on a line, and the
// trust it replaced.
type Trusted struct {
	// File is the file's absolute path, SHA256 that of its content as
	// trusted.
	File, SHA256 string
	// Runs are its settings that need trust, each as the user must see it:
	// "hooks[0] on run.ended: command sh -c '…'".
	Runs []string
	// Unguarded are the files inside the project that its hooks name
	// (their programs or arguments): an agent can change them, and
	// trusting the project file does not cover them.
	Unguarded []string
	// Before is the trust it replaced (nil: none).
	Before *trust.Entry
}

// TrustedFile is one entry of the record of trusted files, with what
// became of its file since.
type TrustedFile struct {
	trust.Entry
	// State is "trusted" (the file is as it was trusted), "changed" (no
	// longer trusted until trusted again) or "gone".
	State string `json:"state"`
}

// trustStore is the user's record of trusted files.
func trustStore(getenv func(string) string) trust.Store {
	return trust.Store{Path: config.TrustFile(getenv)}
}

// projectFile is file made absolute, or the project file that a command run
// in dir reads (config.FindProjectFile) when file is "".
func projectFile(dir, file string) (string, error) {
	if file == "" {
		if file = config.FindProjectFile(dir); file == "" {
			return "", &exit.UsageError{Err: fmt.Errorf("no %s in %s or its parents up to the repository's root", config.ProjectFile, dir),
				Hint: "name the file to trust: jlgcli trust PATH"}
		}
		return file, nil
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(dir, file)
	}
	return trust.Abs(file)
}

// Trust trusts the project file (file; "": the one a command run in dir
// reads) as it is now, for the user whose configuration directory getenv
// gives: from then on, the settings it has that run or send something
// outside the sandbox (its hooks, ...) are honoured, until it changes. The
// file is read once: what is shown is what is trusted. A file that is not
// a project file, or whose settings jlgcli refuses, is not trusted (a
// exit.UsageError, a *config.Error).
func Trust(getenv func(string) string, dir, file string, now time.Time) (Trusted, error) {
	file, err := projectFile(dir, file)
	if err != nil {
		return Trusted{}, err
	}
	if filepath.Base(file) != config.ProjectFile {
		return Trusted{}, &exit.UsageError{Err: fmt.Errorf("%s is not a project file: only a %s needs trust", file, config.ProjectFile),
			Hint: "your own config.toml is trusted as it is; name the jlgcli.toml of a project"}
	}
	l, err := config.LoadFile(file)
	if err != nil {
		return Trusted{}, err
	}
	if l.Sum == "" {
		return Trusted{}, &exit.UsageError{Err: fmt.Errorf("%s: no such file", file)}
	}
	l.Project = true
	c, err := config.Resolve(l) // checked as a run would check it; untrusted, what needs trust is in c.Ignored
	if err != nil {
		return Trusted{}, err
	}
	t := Trusted{File: file, SHA256: l.Sum}
	for i, h := range l.Hooks {
		t.Runs = append(t.Runs, fmt.Sprintf("hooks[%d] on %s: %s", i, strings.Join(h.On, ","), h.Whole()))
		t.Unguarded = append(t.Unguarded, unguarded(filepath.Dir(file), h)...)
	}
	for _, i := range c.Ignored {
		if i.Key != "hooks" {
			t.Runs = append(t.Runs, i.Key+": "+i.Value)
		}
	}
	t.Before, err = trustStore(getenv).Add(file, l.Sum, now)
	return t, err
}

// unguarded are the files under dir, the project's directory, that hook h
// names: its program or an argument that is the path of an existing file
// there (relative to dir, or absolute).
func unguarded(dir string, h hooks.Hook) []string {
	var out []string
	for _, a := range h.Command {
		if a == "" || strings.ContainsAny(a, "\n") {
			continue
		}
		p := a
		if !filepath.IsAbs(p) {
			if !strings.Contains(p, "/") && !exists(filepath.Join(dir, p)) {
				continue
			}
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	return out
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Untrust takes away the trust of the project file (file; "": the one a
// command run in dir reads); removed is the entry it had (nil: it was not
// trusted), path the file's absolute path.
func Untrust(getenv func(string) string, dir, file string) (path string, removed *trust.Entry, err error) {
	if path, err = projectFile(dir, file); err != nil {
		return "", nil, err
	}
	removed, err = trustStore(getenv).Remove(path)
	return path, removed, err
}

// TrustedFiles are the files the user trusted, by path, each with what
// became of it since.
func TrustedFiles(getenv func(string) string) (store string, files []TrustedFile, err error) {
	s := trustStore(getenv)
	list, err := s.List()
	if err != nil {
		return s.Path, nil, err
	}
	for _, e := range list {
		f := TrustedFile{Entry: e, State: "trusted"}
		data, err := os.ReadFile(e.Path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			f.State = "gone"
		case err != nil:
			f.State = "unreadable: " + err.Error()
		case trust.Sum(data) != e.SHA256:
			f.State = "changed"
		}
		files = append(files, f)
	}
	return s.Path, files, nil
}
