package sheet

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// write makes files under dir: name → content.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func ids(sheets []Sheet) []string {
	var out []string
	for _, s := range sheets {
		out = append(out, s.ID)
	}
	return out
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"backlog/b.md":        "---\ndepends: [a]\n---\n# B\n",
		"backlog/a.md":        "# A\n",
		"backlog/C.MD":        "# C\n",
		"backlog/notes.txt":   "not a sheet",
		"backlog/sub/d.md":    "# D, in a subfolder: not read\n",
		"backlog/e.md/x":      "a folder named like a sheet",
		"other/extra.txt":     "---\nid: extra\n---\nA sheet given by name, whatever its extension.\n",
		"other/unknownkey.md": "---\ncolor: red\n---\n",
	})
	backlog := filepath.Join(dir, "backlog")
	sheets, warns, err := Load([]string{
		filepath.Join(dir, "other", "unknownkey.md"),
		backlog,
		filepath.Join(dir, "other", "extra.txt"),
		filepath.Join(backlog, "a.md"), // also in the folder: read once
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"C", "a", "b", "extra", "unknownkey"}, ids(sheets)); d != "" {
		t.Errorf("ids (-want +got):\n%s", d)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].String(), `unknownkey.md:2: unknown front-matter key "color"`) {
		t.Errorf("warnings %v", warns)
	}
	for i := 1; i < len(sheets); i++ {
		if sheets[i-1].File >= sheets[i].File {
			t.Errorf("not sorted by file: %s, %s", sheets[i-1].File, sheets[i].File)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"dup/a.md":     "# A\n",
		"dup/b.md":     "---\nid: a\n---\n",
		"bad/ok.md":    "# ok\n",
		"bad/z.md":     "---\nattempts: x\n---\n",
		"empty/x.txt":  "",
		"plain/one.md": "# one\n",
	})
	for _, tt := range []struct {
		name  string
		paths []string
		want  []string
	}{
		{"duplicate ids name both files", []string{"dup"}, []string{"b.md", `the id "a" is also the id of `, "a.md"}},
		{"a file named twice is read once", []string{"plain/one.md", "dup/a.md", "plain"}, nil},
		{"a bad sheet stops the load", []string{"bad"}, []string{"z.md:2: attempts: "}},
		{"a folder without sheets", []string{"empty"}, []string{"empty: the folder holds no sheet (*.md)"}},
		{"a missing path", []string{"nope.md"}, []string{"nope.md: no such file or folder"}},
		{"no path", nil, []string{"no sheet given"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var paths []string
			for _, p := range tt.paths {
				paths = append(paths, filepath.Join(dir, p))
			}
			_, _, err := Load(paths)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			var se *Error
			if len(tt.paths) > 0 && !errors.As(err, &se) {
				t.Errorf("error %T, want an *Error", err)
			}
		})
	}
}

// TestLoadSeeds: the seeds' dependency lines name tasks by the id of their
// title; within one batch they resolve, and those outside it are dropped
// with a warning.
func TestLoadSeeds(t *testing.T) {
	sheets, warns, err := Load([]string{"testdata/001_d8f994fbe3b452ef.txt", "testdata/000_ea6cb0108f1561cc.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"000_ea6cb0108f1561cc", "001_d8f994fbe3b452ef"}, ids(sheets)); d != "" {
		t.Fatalf("ids (-want +got):\n%s", d)
	}
	id051, id050 := sheets[0], sheets[1]
	if d := cmp.Diff([]string{"001_d8f994fbe3b452ef"}, id051.Depends); d != "" || id051.DependsFrom != FromBody {
		t.Errorf("id051 depends from %q (-want +got):\n%s", id051.DependsFrom, d)
	}
	if id051.BodyRefs[0].ID != "001_d8f994fbe3b452ef" {
		t.Errorf("id051's ref %+v", id051.BodyRefs[0])
	}
	if len(id050.Depends) != 0 || id050.DependsFrom != FromNone || len(id050.BodyRefs) != 2 {
		t.Errorf("id050 depends %v from %q, refs %v", id050.Depends, id050.DependsFrom, id050.BodyRefs)
	}
	want := []string{
		"testdata/001_d8f994fbe3b452ef.txt:19: the dependency `id030` named in the body is no sheet of the batch: ignored (set depends in the front matter to require it)",
		"testdata/001_d8f994fbe3b452ef.txt:19: the dependency `id042` named in the body is no sheet of the batch: ignored (set depends in the front matter to require it)",
	}
	if d := cmp.Diff(want, warnings(warns)); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
}

func TestResolveBodyDepends(t *testing.T) {
	sheets := []Sheet{
		{ID: "a", File: "a.md", TitleID: "T1"},
		{ID: "b", File: "b.md", TitleID: "T2"},
		{ID: "c", File: "c.md", TitleID: "T2"},
		{ID: "T1", File: "T1.md"},
		{ID: "d", File: "d.md", DependsFrom: FromBody, BodyRefs: []Ref{
			{Name: "T1", Line: 3}, // an id wins over a title id
			{Name: "T2", Line: 3}, // two titles: ambiguous
			{Name: "b", Line: 4},
			{Name: "d", Line: 4}, // itself
			{Name: "zz", Line: 5},
		}},
		{ID: "e", File: "e.md", DependsFrom: FromFrontMatter, Depends: []string{"zz"}},
	}
	warns := ResolveBodyDepends(sheets)
	d := sheets[4]
	if diff := cmp.Diff([]string{"T1", "b"}, d.Depends); diff != "" || d.DependsFrom != FromBody {
		t.Errorf("depends from %q (-want +got):\n%s", d.DependsFrom, diff)
	}
	if got := []string{d.BodyRefs[0].ID, d.BodyRefs[1].ID, d.BodyRefs[2].ID, d.BodyRefs[4].ID}; !cmp.Equal(got, []string{"T1", "", "b", ""}) {
		t.Errorf("resolved %v", got)
	}
	if diff := cmp.Diff([]string{"zz"}, sheets[5].Depends); diff != "" {
		t.Errorf("front-matter depends changed: %s", diff)
	}
	if len(warns) != 2 || !strings.Contains(warns[0].String(), "d.md:3: the dependency `T2` named in the body is the title of several sheets (b, c)") ||
		!strings.Contains(warns[1].String(), "d.md:5: the dependency `zz`") {
		t.Errorf("warnings %v", warnings(warns))
	}
}
