package runs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/runs"
)

// The prompt comes from the argument, stdin ('-') or a file; both, neither
// or an empty one are usage errors.
func TestReadPrompt(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.md")
	if err := os.WriteFile(file, []byte("from the file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		in   string
		file string
		args []string
		want string // "": a usage error
	}{
		{"argument", "", "", []string{"do it"}, "do it"},
		{"stdin", "from stdin", "", []string{"-"}, "from stdin"},
		{"file", "", file, nil, "from the file"},
		{"both", "", file, []string{"do it"}, ""},
		{"neither", "", "", nil, ""},
		{"empty", "", "", []string{" \n"}, ""},
		{"missing file", "", file + ".none", nil, ""},
	} {
		got, err := runs.ReadPrompt(strings.NewReader(c.in), c.file, c.args)
		if c.want == "" {
			if !exit.IsUsage(err) {
				t.Errorf("%s: ReadPrompt = %q, %v; want a usage error", c.name, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: ReadPrompt = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if _, err := runs.ReadPrompt(nil, "", []string{"-"}); !exit.IsUsage(err) {
		t.Errorf("ReadPrompt from no stdin: %v, want a usage error", err)
	}
}

// A report's format: --format, --json, else the extension of -o, else md.
func TestReportFormat(t *testing.T) {
	for _, c := range []struct {
		format string
		given  bool
		json   bool
		output string
		want   string // "": an error
	}{
		{"", false, false, "", "md"},
		{"Markdown", true, false, "r.json", "md"},
		{"html", true, false, "", "html"},
		{"", false, true, "r.html", "json"},
		{"json", true, true, "", "json"},
		{"", false, false, "r.HTM", "html"},
		{"", false, false, "r.json", "json"},
		{"pdf", true, false, "", ""},
		{"", true, false, "", ""},
		{"md", true, true, "", ""},
	} {
		got, err := runs.ReportFormat(c.format, c.given, c.json, c.output)
		if (err != nil) != (c.want == "") || got != c.want {
			t.Errorf("ReportFormat(%q, %v, %v, %q) = %q, %v; want %q", c.format, c.given, c.json, c.output, got, err, c.want)
		}
	}
}

// A report written to a relative path lands in the command's directory;
// without a path, on the writer.
func TestWriteReport(t *testing.T) {
	dir := t.TempDir()
	if err := runs.WriteReport(nil, func() (string, error) { return dir, nil }, "r.md", []byte("# report\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "r.md")); err != nil || string(b) != "# report\n" {
		t.Errorf("report file: %q, %v", b, err)
	}
	noDir := func() (string, error) { return "", errors.New("no directory") }
	abs := filepath.Join(dir, "abs.md")
	if err := runs.WriteReport(nil, noDir, abs, []byte("x")); err != nil {
		t.Errorf("WriteReport to an absolute path asked for the directory: %v", err)
	}
	var out strings.Builder
	if err := runs.WriteReport(&out, noDir, "", []byte("# report\n")); err != nil || out.String() != "# report\n" {
		t.Errorf("WriteReport to no file wrote %q, %v; want the report on the writer", out.String(), err)
	}
}

// --since is a local date or an RFC 3339 time; "" counts every run.
func TestParseSince(t *testing.T) {
	if got, err := runs.ParseSince(""); err != nil || !got.IsZero() {
		t.Errorf("ParseSince(\"\") = %v, %v", got, err)
	}
	if got, err := runs.ParseSince("2026-11-25"); err != nil || !got.Equal(time.Date(2026, 11, 25, 0, 0, 0, 0, time.Local)) {
		t.Errorf("ParseSince(date) = %v, %v", got, err)
	}
	if got, err := runs.ParseSince("2026-11-25T10:00:00Z"); err != nil || !got.Equal(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("ParseSince(RFC 3339) = %v, %v", got, err)
	}
	if _, err := runs.ParseSince("yesterday"); !exit.IsUsage(err) {
		t.Errorf("ParseSince(yesterday): %v, want a usage error", err)
	}
}

// A sheet that cannot be read is a usage error; a batch sent to Temporal
// needs no repository here.
func TestLoadSheetsAndBatchRepo(t *testing.T) {
	if _, err := runs.LoadSheets([]string{filepath.Join(t.TempDir(), "none.md")}, func(string) {}); !exit.IsUsage(err) {
		t.Errorf("LoadSheets of a missing file: %v, want a usage error", err)
	}
	cfg := &config.Config{Cwd: t.TempDir()}
	cfg.Temporal.Address = "localhost:7233"
	if repo, err := runs.BatchRepo(context.Background(), cfg); err != nil || repo != nil {
		t.Errorf("BatchRepo on Temporal = %v, %v; want none", repo, err)
	}
	cfg.Temporal.Address = ""
	if _, err := runs.BatchRepo(context.Background(), cfg); err == nil {
		t.Errorf("BatchRepo outside a repository: no error")
	}
}
