package guard

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/gate"
)

func TestPrematureRefusesSoftly(t *testing.T) {
	p := &Premature{Detector: detect.DefaultPremature()}
	ref := p.Check(context.Background(), "Done with the parser.\nNext steps: write the tests.\nDONE")
	if ref == nil || ref.Guard != "premature-stop" || ref.Prompt == "" || !ref.Soft {
		t.Fatalf("%+v", ref)
	}
	if ref := p.Check(context.Background(), "All done, no remaining tasks.\nDONE"); ref != nil {
		t.Fatalf("negation refused: %+v", ref)
	}
}

func TestChecklist(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "TODO.md")
	os.WriteFile(file, []byte("- [x] parser\n- [ ] tests\n- [ ] docs\n"), 0o644)
	c := &Checklist{File: file}
	ref := c.Check(context.Background(), "DONE")
	if ref == nil || !strings.Contains(ref.Details, "2 unchecked") || !strings.Contains(ref.Prompt, "tests") || !strings.Contains(ref.Prompt, "docs") {
		t.Fatalf("%+v", ref)
	}
	os.WriteFile(file, []byte("- [x] parser\n- [x] tests\n- [X] docs\n"), 0o644)
	if ref := c.Check(context.Background(), "DONE"); ref != nil {
		t.Fatalf("all checked, refused: %+v", ref)
	}
	os.Remove(file)
	if ref := c.Check(context.Background(), "DONE"); ref == nil {
		t.Fatal("a deleted checklist let done through")
	}
}

func TestChecksWithBaseline(t *testing.T) {
	dir := t.TempDir()
	broken, _ := gate.ShellCheck("echo known breakage; exit 1")
	flag, _ := gate.ShellCheck("test -f fixed")
	checks := []gate.Check{broken, flag}
	fixed := filepath.Join(dir, "fixed")
	os.WriteFile(fixed, nil, 0o644)
	base := gate.Baseline(context.Background(), dir, nil, checks)
	// The agent breaks what passed in the baseline: that blocks.
	os.Remove(fixed)
	c := &Checks{Dir: dir, Checks: checks, Baseline: base}
	ref := c.Check(context.Background(), "DONE")
	if ref == nil || ref.Guard != "checks" || !strings.Contains(ref.Prompt, "test -f fixed") {
		t.Fatalf("%+v", ref)
	}
	os.WriteFile(fixed, nil, 0o644)
	if ref := c.Check(context.Background(), "DONE"); ref != nil {
		t.Fatalf("the baseline failure blocked done: %+v", ref)
	}
	if c.Last == nil || !c.Last.Passed || len(c.Last.Tolerated) != 1 {
		t.Errorf("last verdict %+v", c.Last)
	}
	if n := c.Note(); !strings.Contains(n, "1 check(s) failing as in the baseline tolerated") {
		t.Errorf("note %q", n)
	}
	// Without the baseline the known breakage blocks.
	c.Baseline = nil
	if ref := c.Check(context.Background(), "DONE"); ref == nil {
		t.Fatal("a failing check passed without a baseline")
	}
}
