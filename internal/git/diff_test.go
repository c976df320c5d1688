package git

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDiffEmpty(t *testing.T) {
	t.Parallel()
	_, r := newRepo(t)
	w := newTask(t, r, "t1")
	write(t, w.Path, "only.log", "ignored")
	c, err := w.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Empty || c.Hash != EmptyHash || c.Text != "" || len(c.Files) != 0 || c.Size != 0 || c.TestsDeleted() {
		t.Errorf("empty change = %+v", c)
	}
}

func TestDiffHashStableAndSensitive(t *testing.T) {
	t.Parallel()
	_, r := newRepo(t)
	w := newTask(t, r, "t1")
	write(t, w.Path, "main.go", "package main\n\nfunc main() { println(\"hi\") }\n")
	a, err := w.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a.Empty || a.Hash == EmptyHash || len(a.Hash) != 64 || !strings.Contains(a.Text, "+func main() { println(\"hi\") }") {
		t.Fatalf("change = %+v", a)
	}
	if len(a.Files) != 1 || a.Files[0] != (FileChange{Path: "main.go", Status: "M", Added: 1, Deleted: 1}) {
		t.Errorf("Files = %+v", a.Files)
	}
	b, err := w.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b.Hash != a.Hash || b.Text != a.Text {
		t.Errorf("two measures of the same change differ: %s, %s", a.Hash, b.Hash)
	}

	// The user's diff settings do not change the hash.
	for _, kv := range [][2]string{{"diff.noprefix", "true"}, {"diff.mnemonicPrefix", "true"}, {"diff.algorithm", "patience"},
		{"diff.renames", "copies"}, {"color.diff", "always"}, {"core.abbrev", "12"}} {
		tgit(t, w.Path, "config", kv[0], kv[1])
	}
	if c, _ := w.Diff(ctx); c.Hash != a.Hash {
		t.Errorf("the user's diff config changed the hash: %s, was %s", c.Hash, a.Hash)
	}

	// Staging changes nothing either: the state of the files is measured.
	tgit(t, w.Path, "add", "main.go")
	if c, _ := w.Diff(ctx); c.Hash != a.Hash {
		t.Errorf("staging changed the hash")
	}

	// One byte more is another change; back to the same content is the
	// same hash again.
	write(t, w.Path, "main.go", "package main\n\nfunc main() { println(\"hi!\") }\n")
	if c, _ := w.Diff(ctx); c.Hash == a.Hash {
		t.Error("a different change has the same hash")
	}
	write(t, w.Path, "main.go", "package main\n\nfunc main() { println(\"hi\") }\n")
	if c, _ := w.Diff(ctx); c.Hash != a.Hash {
		t.Error("the same change again has another hash")
	}
	// A mode change alone is a change.
	os.Chmod(filepath.Join(w.Path, "main.go"), 0o755)
	if c, _ := w.Diff(ctx); c.Hash == a.Hash {
		t.Error("a mode change is not seen")
	}
}

func TestDiffCountsUntrackedAndBinaryFiles(t *testing.T) {
	t.Parallel()
	_, r := newRepo(t)
	w := newTask(t, r, "t1")
	write(t, w.Path, "pkg/new.go", "package pkg\n\nvar X = 1\n")
	write(t, w.Path, "logo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00binary\x00")
	write(t, w.Path, "build/artifact", "ignored")
	write(t, w.Path, "spaced name é.txt", "x\n")
	c, err := w.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]FileChange{
		"pkg/new.go":        {Path: "pkg/new.go", Status: "A", Added: 3, Deleted: 0},
		"logo.png":          {Path: "logo.png", Status: "A", Added: -1, Deleted: -1},
		"spaced name é.txt": {Path: "spaced name é.txt", Status: "A", Added: 1},
	}
	if len(c.Files) != len(want) {
		t.Errorf("Files = %+v", c.Files)
	}
	for _, f := range c.Files {
		if want[f.Path] != f {
			t.Errorf("file %+v, want %+v", f, want[f.Path])
		}
	}
	if !c.Files[0].Binary() && !c.Files[1].Binary() {
		t.Error("no binary file")
	}
	if !strings.Contains(c.Text, "GIT binary patch") || !strings.Contains(c.Text, "diff --git a/spaced name é.txt b/spaced name é.txt") {
		t.Errorf("Text:\n%s", c.Text)
	}
	// A different binary content is a different hash.
	write(t, w.Path, "logo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00binarY\x00")
	if d, _ := w.Diff(ctx); d.Hash == c.Hash {
		t.Error("a binary change is not seen by the hash")
	}
}

func TestDiffDetectsDeletedTests(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	write(t, dir, "tests/fixture.txt", "fixture\n")
	write(t, dir, "web/app.spec.ts", "it()\n")
	tgit(t, dir, "add", "-A")
	tgit(t, dir, "commit", "-q", "-m", "more tests")
	w := newTask(t, r, "t1")

	os.Remove(filepath.Join(w.Path, "README.md"))
	c, _ := w.Diff(ctx)
	if c.TestsDeleted() {
		t.Errorf("deleting README.md deletes tests: %v", c.DeletedTests)
	}
	os.Remove(filepath.Join(w.Path, "main_test.go"))
	os.RemoveAll(filepath.Join(w.Path, "tests"))
	write(t, w.Path, "web/app.spec.ts", "it.skip()\n") // modified, not deleted
	c, err := w.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.DeletedTests, ",") != "main_test.go,tests/fixture.txt" {
		t.Errorf("DeletedTests = %v", c.DeletedTests)
	}
	// A test moved to a name that is not a test is a deletion.
	os.Rename(filepath.Join(w.Path, "web", "app.spec.ts"), filepath.Join(w.Path, "web", "app.ts"))
	if c, _ := w.Diff(ctx); !strings.Contains(strings.Join(c.DeletedTests, ","), "web/app.spec.ts") {
		t.Errorf("renamed test not seen: %v", c.DeletedTests)
	}
}

// TestDiffDetectsWeakenedTests: a change that removes or alters lines of
// code of a test file of the base is a weakened test, with its lines;
// adding lines, comments, blank lines, re-indenting or moving lines, new
// test files and fixtures are not.
func TestDiffDetectsWeakenedTests(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	table := "package main\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n" +
		"\tfor _, c := range []struct{ a, b, want int }{\n\t\t{1, 1, 2},\n\t\t{2, 2, 4},\n\t\t{0, 0, 0},\n\t} {\n" +
		"\t\t// check one case\n\t\tif got := add(c.a, c.b); got != c.want {\n\t\t\tt.Errorf(\"add = %d\", got)\n\t\t}\n\t}\n}\n"
	write(t, dir, "add_test.go", table)
	write(t, dir, "tests/data.txt", "one\ntwo\n")
	write(t, dir, "tests/test_calc.py", "def test_add():\n    # adds\n    assert add(1, 1) == 2\n")
	tgit(t, dir, "add", "-A")
	tgit(t, dir, "commit", "-q", "-m", "tests")
	w := newTask(t, r, "t1")
	weakened := func() []WeakenedTest {
		t.Helper()
		c, err := w.Diff(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c.WeakenedTests
	}

	// Additions, comments, blanks, re-indenting and moving: nothing.
	harmless := strings.Replace(table, "\t\t{0, 0, 0},\n", "\t\t{0, 0, 0},\n\t\t{3, 3, 6},\n", 1)
	harmless = strings.Replace(harmless, "\t\t// check one case\n", "\t\t// check a case\n\n", 1)
	harmless = strings.Replace(harmless, "\t\t{1, 1, 2},\n\t\t{2, 2, 4},\n", "\t\t{2, 2, 4},\n\t\t{1,  1, 2},\n", 1)
	write(t, w.Path, "add_test.go", harmless)
	write(t, w.Path, "tests/data.txt", "one\n")
	write(t, w.Path, "tests/test_calc.py", "def test_add():\n    assert add(1, 1) == 2\n    assert add(2, 2) == 4\n")
	write(t, w.Path, "new_test.go", "package main\n")
	if got := weakened(); len(got) != 0 {
		t.Errorf("harmless changes weaken tests: %+v", got)
	}

	// A deleted row, a changed expected value, a removed assertion.
	weak := strings.Replace(table, "\t\t{2, 2, 4},\n", "", 1)
	weak = strings.Replace(weak, "{0, 0, 0}", "{0, 0, 1}", 1)
	write(t, w.Path, "add_test.go", weak)
	write(t, w.Path, "tests/test_calc.py", "def test_add():\n    # adds\n    pass\n")
	want := []WeakenedTest{
		{Path: "add_test.go", Count: 2, Removed: []string{"{2, 2, 4},", "{0, 0, 0},"}},
		{Path: "tests/test_calc.py", Count: 1, Removed: []string{"assert add(1, 1) == 2"}},
	}
	if got := weakened(); !reflect.DeepEqual(got, want) {
		t.Errorf("WeakenedTests = %+v\nwant %+v", got, want)
	}
}

func TestDiffTruncated(t *testing.T) {
	t.Parallel()
	_, r := newRepo(t)
	w := newTask(t, r, "t1")
	var b strings.Builder
	for i := 0; b.Len() < MaxDiffText+100<<10; i++ {
		b.WriteString(strings.Repeat("x", 70) + "\n")
	}
	write(t, w.Path, "big.txt", b.String())
	c, err := w.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Truncated || c.Size <= MaxDiffText {
		t.Fatalf("Truncated %v, Size %d", c.Truncated, c.Size)
	}
	text, note, ok := strings.Cut(c.Text, "[jlgcli: diff truncated:")
	if !ok || len(text) > MaxDiffText || !strings.HasSuffix(text, "\n") || !strings.HasSuffix(note, " bytes shown]\n") {
		t.Errorf("truncated text: %d bytes, note %q", len(text), note)
	}
	// The hash covers the whole diff: a change past the cut changes it.
	write(t, w.Path, "big.txt", b.String()+"tail\n")
	d, _ := w.Diff(ctx)
	if d.Hash == c.Hash {
		t.Error("a change beyond the kept text did not change the hash")
	}
	if len(d.Text) != len(c.Text) {
		t.Error("the kept text changed length though the change is past the cut")
	}
}

func TestIsTestFile(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"main_test.go":           true,
		"pkg/x/y_test.go":        true,
		"test_parse.py":          true,
		"lib/parse_test.py":      true,
		"src/app.test.js":        true,
		"src/app.test.tsx":       true,
		"src/app.spec.ts":        true,
		"spec/models/user.rb":    true,
		"user_spec.rb":           true,
		"tests/data.json":        true,
		"a/tests/b/c.txt":        true,
		"src/__tests__/x.js":     true,
		"test/helper.js":         true,
		"main.go":                false,
		"testing.go":             false,
		"contest.py":             false,
		"test.py":                false,
		"src/latest/x.go":        false,
		"app.testing.js":         false,
		"tests":                  false,
		"docs/spec.md":           false,
		"protest_test.txt":       false,
		"my.spec":                false,
		"src/app.test.go.orig":   false,
		"attestations/readme.md": false,
	} {
		if got := IsTestFile(p); got != want {
			t.Errorf("IsTestFile(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestParseRawNumstatRejectsNonsense(t *testing.T) {
	t.Parallel()
	if _, err := parseRawNumstat(":100644 100644 a b M\x00x\x001\t1\ty\x00"); err == nil {
		t.Error("a numstat record for another path was accepted")
	}
	files, err := parseRawNumstat(":000000 100644 0 a A\x00:x\x001\t0\t:x\x00")
	if err != nil || len(files) != 1 || files[0].Path != ":x" || files[0].Added != 1 {
		t.Errorf("path starting with ':' = %+v, %v", files, err)
	}
}

func TestDiffFromMeasuresOnlyWhatChangedSince(t *testing.T) {
	t.Parallel()
	_, r := newRepo(t)
	w := newTask(t, r, "t1")
	write(t, w.Path, "a.txt", "one\n")
	start, err := w.Snapshot(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	write(t, w.Path, "b.txt", "two\n")
	c, err := w.DiffFrom(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 1 || c.Files[0].Path != "b.txt" || strings.Contains(c.Text, "a.txt") {
		t.Errorf("change since the snapshot = %+v", c)
	}
	whole, err := w.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Files) != 2 {
		t.Errorf("change since base = %+v", whole.Files)
	}
	if c, err = w.DiffFrom(ctx, start); err != nil || len(c.Files) != 1 {
		t.Fatalf("again: %+v, %v", c, err)
	}
	write(t, w.Path, "b.txt", "")
	if err := os.Remove(filepath.Join(w.Path, "b.txt")); err != nil {
		t.Fatal(err)
	}
	if c, err = w.DiffFrom(ctx, start); err != nil || !c.Empty {
		t.Errorf("back to the snapshot: %+v, %v", c, err)
	}
}

// Peek measures as Diff does and leaves no object in the repository (a
// worktree measured every few seconds while an agent works); Diff, whose
// objects the engine keeps, does write them.
func TestPeekLeavesNoTrace(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	w := newTask(t, r, "t1")
	write(t, w.Path, "draft.txt", "a draft seen only by a peek\n")
	blob := tgit(t, w.Path, "hash-object", "draft.txt")
	peeked, err := w.Peek(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(peeked.Files) != 1 || peeked.Files[0].Path != "draft.txt" || peeked.Files[0].Added != 1 || !strings.Contains(peeked.Text, "+a draft seen only by a peek") {
		t.Fatalf("peek = %+v", peeked)
	}
	has := func() bool {
		return exec.Command("git", "-C", dir, "cat-file", "-e", blob).Run() == nil
	}
	if has() {
		t.Error("the peek wrote the draft's blob into the repository")
	}
	measured, err := w.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if measured.Hash != peeked.Hash {
		t.Errorf("Diff and Peek differ: %s and %s", measured.Hash, peeked.Hash)
	}
	if !has() {
		t.Error("Diff did not write the blob: the test cannot tell a peek from a diff")
	}
}
