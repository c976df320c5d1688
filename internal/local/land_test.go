package local

import (
	"context"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/gate"
)

// fakeSite is a LandSite that lays laid and records what LandTask asked.
type fakeSite struct {
	laid              Laid
	dir               string
	checkedOut, freed bool
	committed         bool
}

func (f *fakeSite) Lay(context.Context) (Laid, error)      { return f.laid, nil }
func (f *fakeSite) Baseline() (*gate.Report, error)        { return nil, nil }
func (f *fakeSite) Commit(context.Context) (string, error) { f.committed = true; return "c0ffee", nil }
func (f *fakeSite) Checkout(context.Context) (string, func(), error) {
	f.checkedOut = true
	return f.dir, func() { f.freed = true }, nil
}

// TestLandTask: the one rule of every landing (local batch, Temporal's
// land activity): nothing, a conflict and a landing made before land
// nothing; an unmoved branch lands without the checks; a moved one lands
// only when the task's checks pass on the change laid on it.
func TestLandTask(t *testing.T) {
	pass := TaskSpec{Checks: []gate.Check{{Name: "true", Shell: "true"}}}
	fail := TaskSpec{Checks: []gate.Check{{Name: "false", Shell: "false"}}}
	for _, c := range []struct {
		name      string
		laid      Laid
		spec      TaskSpec
		status    LandStatus
		regated   bool
		checked   bool
		committed bool
		details   string
	}{
		{name: "nothing", laid: Laid{Nothing: true}, spec: pass, status: LandNothing},
		{name: "conflict", laid: Laid{Conflict: "conflicts in a.txt", Moved: true}, spec: pass, status: LandConflict, regated: true, details: "conflicts in a.txt"},
		{name: "landed before", laid: Laid{Landed: "beef"}, spec: pass, status: LandMerged},
		{name: "unmoved", laid: Laid{Head: "0123456789abcdef"}, spec: fail, status: LandMerged, committed: true},
		{name: "moved, checks pass", laid: Laid{Moved: true, Head: "0123456789abcdef"}, spec: pass, status: LandMerged, regated: true, checked: true, committed: true},
		{name: "moved, checks fail", laid: Laid{Moved: true, Head: "0123456789abcdef"}, spec: fail, status: LandGateFailed, regated: true, checked: true,
			details: "the checks fail on the change laid on main as it is now (0123456789): "},
		{name: "moved, no checks", laid: Laid{Moved: true, Head: "0123456789abcdef"}, status: LandMerged, regated: true, committed: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			site := &fakeSite{laid: c.laid, dir: t.TempDir()}
			var told string
			l, err := LandTask(context.Background(), site, "run-1", "main", c.spec, func(head string) { told = head })
			if err != nil {
				t.Fatal(err)
			}
			if l.Status != c.status || l.Regated != c.regated || !strings.HasPrefix(l.Details, c.details) || (c.details == "" && l.Details != "") {
				t.Errorf("landing %+v; want %s, regated %v, details %q", l, c.status, c.regated, c.details)
			}
			if site.checkedOut != c.checked || site.freed != c.checked || (told != "") != c.checked {
				t.Errorf("checked out %v, removed %v, told %q; want the checks run: %v", site.checkedOut, site.freed, told, c.checked)
			}
			if site.committed != c.committed {
				t.Errorf("committed %v, want %v", site.committed, c.committed)
			}
			if c.committed && l.Commit != "c0ffee" {
				t.Errorf("commit %q", l.Commit)
			}
		})
	}
}
