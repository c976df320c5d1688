package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/trust"
)

// stdio is a world with no user file and no JLGCLI_* variable, working
// in dir.
func stdio(t *testing.T, dir string) *Stdio {
	home := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": home, "XDG_STATE_HOME": home}
	var err strings.Builder
	return &Stdio{Err: &err, Dir: dir, Getenv: func(k string) string { return env[k] }}
}

// project is a directory whose jlgcli.toml has one hook.
func project(t *testing.T) string {
	dir := t.TempDir()
	toml := "[[hooks]]\non = [\"*\"]\ncommand = [\"true\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "jlgcli.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// trustProject trusts dir's jlgcli.toml as it is, as the user of s.
func trustProject(t *testing.T, s *Stdio, dir string) {
	t.Helper()
	file := filepath.Join(dir, config.ProjectFile)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (trust.Store{Path: config.TrustFile(s.Env)}).Add(file, trust.Sum(data), time.Now()); err != nil {
		t.Fatal(err)
	}
}

// The hooks are those of the configuration that the command resolved with
// its flags (--cwd's project file), not the working directory's.
func TestHooksOfTheCommandsConfiguration(t *testing.T) {
	proj := project(t)
	s := stdio(t, t.TempDir())
	trustProject(t, s, proj)
	if _, err := s.LoadConfig(&config.Layer{Name: "flag", Cwd: &proj}); err != nil {
		t.Fatal(err)
	}
	if d := s.Hooks(); d == nil || len(d.Hooks) != 1 {
		t.Errorf("Hooks = %+v, want the project file's one hook", d)
	}
	if s := stdio(t, t.TempDir()); s.Hooks() != nil {
		t.Errorf("Hooks with no configured hook: %+v, want none", s.Hooks())
	}
}

// A run's configuration is read as its directory sees it, when that
// directory still exists.
func TestRunConfig(t *testing.T) {
	proj := project(t)
	s := stdio(t, t.TempDir())
	trustProject(t, s, proj)
	cfg, err := s.RunConfig(&config.Layer{Name: "flag"}, proj)
	if err != nil || len(cfg.Hooks) != 1 {
		t.Fatalf("RunConfig(project) = %+v, %v; want its hook", cfg, err)
	}
	cfg, err = s.RunConfig(&config.Layer{Name: "flag"}, filepath.Join(proj, "gone"))
	if err != nil || len(cfg.Hooks) != 0 {
		t.Errorf("RunConfig(gone) = %+v, %v; want the working directory's", cfg, err)
	}
}

// --state-dir is where the runs are kept; else the configuration's.
func TestStateRoot(t *testing.T) {
	s := stdio(t, t.TempDir())
	want := filepath.Join(t.TempDir(), "state")
	if got, err := s.StateRoot(want); err != nil || got != want {
		t.Errorf("StateRoot(%s) = %q, %v", want, got, err)
	}
	if got, err := s.StateRoot(""); err != nil || got == want || got == "" {
		t.Errorf("StateRoot() = %q, %v; want the default", got, err)
	}
}

// A flag's bad value names the flag, not the key behind it.
func TestLoadConfigNamesTheFlag(t *testing.T) {
	s := stdio(t, t.TempDir())
	gone := filepath.Join(t.TempDir(), "gone")
	_, err := s.LoadConfig(&config.Layer{Name: "flag", Cwd: &gone})
	if err == nil || !strings.Contains(err.Error(), "--cwd") {
		t.Errorf("LoadConfig(--cwd gone) = %v, want an error naming --cwd", err)
	}
}

// A resume gives the run's recorded environment names the values, and
// fires the hooks, of the configuration as the run's directory sees it,
// --env first; not those of the directory where resume is typed.
func TestResumePartsReadTheRunsDirectory(t *testing.T) {
	proj := project(t)
	toml := "[env]\nTOKEN = \"project\"\n\n[[hooks]]\non = [\"*\"]\ncommand = [\"true\"]\n"
	if err := os.WriteFile(filepath.Join(proj, "jlgcli.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	s := stdio(t, t.TempDir())
	trustProject(t, s, proj)
	rp, done := s.ResumeParts(true, &config.Layer{Name: "flag"})
	defer done()
	value, err := rp.Env(proj)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := value("", "TOKEN"); v != "project" || !ok {
		t.Errorf("TOKEN = %q, %v; want the run's project file's", v, ok)
	}
	if d := rp.Hooks(proj); d == nil || len(d.Hooks) != 1 {
		t.Errorf("Hooks(run's directory) = %+v, want its one hook", d)
	}
	if d := rp.Hooks(t.TempDir()); d != nil {
		t.Errorf("Hooks(a directory without hooks) = %+v, want none", d)
	}
	rp, done = s.ResumeParts(true, &config.Layer{Name: "flag", Env: map[string]string{"TOKEN": "flag"}})
	defer done()
	if value, err = rp.Env(proj); err != nil {
		t.Fatal(err)
	}
	if v, _ := value("", "TOKEN"); v != "flag" {
		t.Errorf("TOKEN with --env TOKEN=flag = %q, want flag", v)
	}
}

// A single call has its live line unless quiet, and nothing else.
func TestOnce(t *testing.T) {
	s := stdio(t, t.TempDir())
	if p := s.Once(false); p.LoopObserver == nil || p.TaskObserver != nil || p.Hooks != nil {
		t.Errorf("Once(not quiet) = %+v, want the live line only", p)
	}
	if p := s.Once(true); p.LoopObserver != nil {
		t.Errorf("Once(quiet) = %+v, want no live line", p)
	}
}

// A run id completes among the runs kept here; with none readable, to
// nothing.
func TestCompletions(t *testing.T) {
	s := stdio(t, t.TempDir())
	root, err := s.StateRoot("")
	if err != nil {
		t.Fatal(err)
	}
	const id = "20261125T100000Z-aaaa0001"
	run, err := store.Create(root, id, store.Meta{Command: "loop", Prompt: "Do it"})
	if err != nil {
		t.Fatal(err)
	}
	run.Close()
	if got := s.Completions("20261125"); len(got) == 0 || !strings.HasPrefix(got[0], id) {
		t.Errorf("Completions(20261125) = %q, want %s first", got, id)
	}
	if got := s.Completions("1999"); len(got) != 0 {
		t.Errorf("Completions(1999) = %q, want none", got)
	}
	gone := stdio(t, filepath.Join(t.TempDir(), "gone"))
	if got := gone.Completions(""); got != nil {
		t.Errorf("Completions in a directory that is gone = %q, want none", got)
	}
}

// The hooks of a project file that is not trusted are not run: neither the
// command's nor a resume's, which reads them as the run's directory sees
// them. What is ignored is said once, with how to trust the file.
func TestUntrustedHooksAreIgnoredAndSaidOnce(t *testing.T) {
	proj := project(t)
	s := stdio(t, proj)
	if _, err := s.LoadConfig(&config.Layer{Name: "flag"}); err != nil {
		t.Fatal(err)
	}
	if d := s.Hooks(); d != nil {
		t.Errorf("Hooks = %+v, want none", d)
	}
	rp, done := s.ResumeParts(true, &config.Layer{Name: "flag"})
	defer done()
	if d := rp.Hooks(proj); d != nil {
		t.Errorf("a resume's Hooks = %+v, want none", d)
	}
	file := filepath.Join(proj, config.ProjectFile)
	said := s.Err.(*strings.Builder).String()
	if strings.Count(said, "jlgcli: warning: "+file+" is not trusted: its [[hooks]] (1) ignored") != 1 ||
		strings.Count(said, "jlgcli: hint: if you wrote it, read it and trust it as it is with: jlgcli trust "+file) != 1 {
		t.Errorf("stderr:\n%s\nwant the warning and its hint once", said)
	}
}
