package git

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

// MaxDiffText is how much of a diff Change.Text keeps.
const MaxDiffText = 256 << 10

// EmptyHash is the Hash of an empty change (the sha256 of no bytes).
const EmptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// diffOptions fix the form of the diff whatever the user's config says, so
// that its hash only depends on the two trees.
var diffOptions = []string{
	"-r", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv",
	"--diff-algorithm=myers", "--src-prefix=a/", "--dst-prefix=b/", "-O/dev/null",
}

// Change is the change of a worktree against its task's base.
type Change struct {
	// Base is the commit compared against; Tree the tree of the
	// worktree's state that was measured.
	Base string `json:"base"`
	Tree string `json:"tree"`
	// Empty is true when the worktree holds no change: Hash is then
	// EmptyHash, Text and Files are empty.
	Empty bool `json:"empty"`
	// Hash is the hex sha256 of the full diff (git diff-tree -p --binary
	// --full-index with fixed options): equal changes have equal hashes.
	Hash string `json:"hash"`
	// Text is the diff, cut at a line end to at most MaxDiffText bytes,
	// then followed by a note saying so when Truncated.
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitempty"`
	// Size is the length of the full diff in bytes.
	Size int64 `json:"size"`
	// Files are the changed paths, in git's order.
	Files []FileChange `json:"files"`
	// DeletedTests are the deleted paths that are test files (IsTestFile).
	DeletedTests []string `json:"deletedTests,omitempty"`
	// WeakenedTests are the test files of the base (IsTestFile, in a
	// programming language: IsTestCode) that the change modifies by
	// removing or altering lines of code (see WeakenedTest).
	WeakenedTests []WeakenedTest `json:"weakenedTests,omitempty"`
}

// WeakenedTest is a test file that existed at the base and whose change
// removes or alters lines: every line of code (not blank, not a comment)
// that the change deletes and does not put back elsewhere in the file (a
// line moved or re-indented is the same line). Adding lines is not
// weakening; a changed line (an expected value, an assertion) is.
type WeakenedTest struct {
	Path string `json:"path"`
	// Count is the number of lines removed or altered; Removed the first
	// MaxWeakenedLines of them, trimmed.
	Count   int      `json:"count"`
	Removed []string `json:"removed"`
}

// MaxWeakenedLines bounds WeakenedTest.Removed.
const MaxWeakenedLines = 10

// TestsDeleted reports whether the change deletes a test file.
func (c Change) TestsDeleted() bool { return len(c.DeletedTests) > 0 }

// FileChange is one changed path.
type FileChange struct {
	Path string `json:"path"`
	// Status is git's letter: A added, D deleted, M modified, T type
	// changed (file, symlink, submodule).
	Status string `json:"status"`
	// Added and Deleted count lines; both are -1 for a binary file.
	Added   int `json:"added"`
	Deleted int `json:"deleted"`
}

// Binary reports whether git sees the file as binary.
func (f FileChange) Binary() bool { return f.Added < 0 }

// Diff measures the worktree's change against Base: tracked changes and
// untracked files that are not ignored, binary files included. It reads the
// worktree through a temporary index and changes nothing.
func (w *Worktree) Diff(ctx context.Context) (Change, error) {
	g := w.tree(ctx)
	tree, err := captureTree(ctx, g)
	if err != nil {
		return Change{}, err
	}
	return diffTrees(ctx, g, w.Base, tree)
}

// Peek is Diff that leaves no trace in the repository: the objects the
// measurement writes (the worktree's files, its tree) go to a scratch
// object store, removed after, so that a worktree measured again and again
// while an agent works (the board, top) does not fill the repository with
// the blobs of every state it passed through.
func (w *Worktree) Peek(ctx context.Context) (Change, error) {
	g := w.tree(ctx)
	if g.err != nil {
		return Change{}, g.err
	}
	dir, err := os.MkdirTemp("", "jlgcli-objects-")
	if err != nil {
		return Change{}, err
	}
	defer os.RemoveAll(dir)
	g.scratch = dir
	tree, err := captureTree(ctx, g)
	if err != nil {
		return Change{}, err
	}
	return diffTrees(ctx, g, w.Base, tree)
}

// DiffFrom measures the worktree's change against commit (e.g. the snapshot
// of where an attempt started): what changed since. Like Diff, it changes
// nothing.
func (w *Worktree) DiffFrom(ctx context.Context, commit string) (Change, error) {
	g := w.tree(ctx)
	tree, err := captureTree(ctx, g)
	if err != nil {
		return Change{}, err
	}
	return diffTrees(ctx, g, commit, tree)
}

// Measured is a state of a worktree as Measure measured it.
type Measured struct {
	// Change is its change against the worktree's Base; From its change
	// since each commit Measure was given, in their order.
	Change Change
	From   []Change
	// Snapshot is the commit it was saved as (Snapshot).
	Snapshot string
}

// Measure reads the worktree's state once and does with it what Diff, then
// DiffFrom of each commit of from, then Snapshot(name) do, each of which
// reads it again: after an agent's call, what changed, since where, and the
// state kept. Changes against commits of the same tree are measured once.
// Like them, it changes nothing in the worktree.
func (w *Worktree) Measure(ctx context.Context, name string, from ...string) (Measured, error) {
	if err := checkName("snapshot name", name); err != nil {
		return Measured{}, err
	}
	if name == BaseName {
		return Measured{}, fmt.Errorf("snapshot name %q is reserved", name)
	}
	g := w.tree(ctx)
	tree, err := captureTree(ctx, g)
	if err != nil {
		return Measured{}, err
	}
	byTree := map[string]Change{} // the change from each base tree measured
	measure := func(base string) (Change, error) {
		baseTree, err := revTree(ctx, g, base)
		if err != nil {
			return Change{Base: base, Tree: tree}, err
		}
		c, ok := byTree[baseTree]
		if !ok {
			if c, err = diffTrees(ctx, g, base, tree); err != nil {
				return c, err
			}
			byTree[baseTree] = c
		}
		c.Base = base
		c.Files, c.DeletedTests, c.WeakenedTests = slices.Clone(c.Files), slices.Clone(c.DeletedTests), slices.Clone(c.WeakenedTests)
		return c, nil
	}
	var m Measured
	if m.Change, err = measure(w.Base); err != nil {
		return m, err
	}
	for _, commit := range from {
		c, err := measure(commit)
		if err != nil {
			return m, err
		}
		m.From = append(m.From, c)
	}
	m.Snapshot, err = w.save(ctx, g, name, tree)
	return m, err
}

// diffTrees measures the change from commit base to tree.
func diffTrees(ctx context.Context, g runner, base, tree string) (Change, error) {
	c := Change{Base: base, Tree: tree}
	baseTree, err := revTree(ctx, g, base)
	if err != nil {
		return c, err
	}
	if baseTree == tree {
		c.Empty, c.Hash, c.Files = true, EmptyHash, []FileChange{}
		return c, nil
	}

	// The file list: raw records (status) then numstat records (counts),
	// NUL-separated, in the same order.
	args := append([]string{"diff-tree"}, diffOptions...)
	args = append(args, "-z", "--raw", "--numstat", baseTree, tree)
	out, _, err := g.run(ctx, call{args: args})
	if err != nil {
		return c, err
	}
	if c.Files, err = parseRawNumstat(out); err != nil {
		return c, err
	}
	var modified []string
	for _, f := range c.Files {
		switch {
		case f.Status == "D" && IsTestFile(f.Path):
			c.DeletedTests = append(c.DeletedTests, f.Path)
		case f.Status == "M" && !f.Binary() && f.Deleted > 0 && IsTestCode(f.Path):
			modified = append(modified, f.Path)
		}
	}
	if len(modified) > 0 {
		args := append([]string{"diff-tree"}, diffOptions...)
		args = append(args, "-p", "-U0", baseTree, tree, "--")
		out, _, err := g.run(ctx, call{args: append(args, literal(modified)...)})
		if err != nil {
			return c, err
		}
		c.WeakenedTests = weakenedTests(out)
	}

	// The patch, hashed whole and kept in part.
	pw := &patchWriter{h: sha256.New(), limit: MaxDiffText}
	args = append([]string{"diff-tree"}, diffOptions...)
	args = append(args, "-p", "--binary", "--full-index", baseTree, tree)
	if _, _, err := g.run(ctx, call{args: args, stdout: pw}); err != nil {
		return c, err
	}
	c.Hash = hex.EncodeToString(pw.h.Sum(nil))
	c.Size = pw.n
	c.Text = string(pw.buf)
	if pw.n > int64(len(pw.buf)) {
		text := pw.buf
		if i := strings.LastIndexByte(string(text), '\n'); i >= 0 {
			text = text[:i+1]
		}
		c.Truncated = true
		c.Text = string(text) + fmt.Sprintf("[jlgcli: diff truncated: %d of %d bytes shown]\n", len(text), pw.n)
	}
	return c, nil
}

// patchWriter hashes everything written to it and keeps the first limit
// bytes.
type patchWriter struct {
	h     hash.Hash
	buf   []byte
	limit int
	n     int64
}

func (p *patchWriter) Write(b []byte) (int, error) {
	p.h.Write(b)
	p.n += int64(len(b))
	if room := p.limit - len(p.buf); room > 0 {
		p.buf = append(p.buf, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

// parseRawNumstat reads `diff-tree -z --raw --numstat` output:
// ":mode mode sha sha S\0path\0" records, then "added\tdeleted\tpath\0".
func parseRawNumstat(out string) ([]FileChange, error) {
	fields := strings.Split(out, "\x00")
	if len(fields) > 0 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	files := []FileChange{}
	i := 0
	for i < len(fields) && strings.HasPrefix(fields[i], ":") {
		header := strings.Fields(fields[i])
		if len(header) != 5 || i+1 >= len(fields) {
			return nil, fmt.Errorf("git diff-tree: unexpected record %q", fields[i])
		}
		files = append(files, FileChange{Path: fields[i+1], Status: header[4][:1]})
		i += 2
	}
	for n := 0; i < len(fields); n, i = n+1, i+1 {
		parts := strings.SplitN(fields[i], "\t", 3)
		if len(parts) != 3 || n >= len(files) || parts[2] != files[n].Path {
			return nil, fmt.Errorf("git diff-tree: unexpected numstat record %q", fields[i])
		}
		files[n].Added, files[n].Deleted = count(parts[0]), count(parts[1])
	}
	return files, nil
}

func count(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1 // "-": binary
	}
	return n
}

// testDirs are directories whose files are all test files.
var testDirs = map[string]bool{"tests": true, "test": true, "__tests__": true, "spec": true}

// jsExts are the extensions of *.test.<ext> test files.
var jsExts = map[string]bool{".js": true, ".jsx": true, ".ts": true, ".tsx": true, ".mjs": true, ".cjs": true, ".mts": true, ".cts": true}

// IsTestFile reports whether the slash-separated path p names a test file:
// *_test.go, test_*.py, *_test.py, *.test.js (and .ts, .jsx, .tsx, .mjs,
// .cjs, .mts, .cts), *.spec.* , *_spec.rb, or any file under a directory
// named tests, test, __tests__ or spec.
func IsTestFile(p string) bool {
	dir, base := path.Split(p)
	for _, d := range strings.Split(strings.Trim(dir, "/"), "/") {
		if testDirs[d] {
			return true
		}
	}
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	switch {
	case strings.HasSuffix(base, "_test.go"),
		ext == ".py" && (strings.HasPrefix(base, "test_") || strings.HasSuffix(stem, "_test")),
		jsExts[ext] && strings.HasSuffix(stem, ".test") && stem != ".test",
		strings.HasSuffix(base, "_spec.rb"):
		return true
	}
	// *.spec.*: ".spec." with a name before it and an extension after.
	if i := strings.Index(base, ".spec."); i > 0 && i+len(".spec.") < len(base) {
		return true
	}
	return false
}

// literal makes paths pathspecs that match themselves only.
func literal(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = ":(literal)" + p
	}
	return out
}

// weakenedTests reads a patch (-U0) of modified test files: for each file,
// the lines of code it removes that it does not add back (compared without
// blanks), in order.
func weakenedTests(patch string) []WeakenedTest {
	var out []WeakenedTest
	var file string
	var removed []string
	added := map[string]int{}
	flush := func() {
		var w WeakenedTest
		for _, l := range removed {
			k := strings.Join(strings.Fields(l), "")
			if added[k] > 0 {
				added[k]-- // moved or re-indented, not removed
				continue
			}
			w.Count++
			if len(w.Removed) < MaxWeakenedLines {
				w.Removed = append(w.Removed, clipLine(strings.TrimSpace(l), 200))
			}
		}
		if w.Count > 0 {
			w.Path = file
			out = append(out, w)
		}
		file, removed = "", nil
		clear(added)
	}
	inHunk := false
	for _, l := range strings.Split(patch, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			flush()
			inHunk = false
		case !inHunk && strings.HasPrefix(l, "--- a/"):
			file = strings.TrimPrefix(l, "--- a/")
		case !inHunk && strings.HasPrefix(l, "--- \"a/"):
			if u, err := strconv.Unquote(strings.TrimPrefix(l, "--- ")); err == nil {
				file = strings.TrimPrefix(u, "a/")
			}
		case strings.HasPrefix(l, "@@"):
			inHunk = true
		case inHunk && strings.HasPrefix(l, "-"):
			if codeLine(file, l[1:]) {
				removed = append(removed, l[1:])
			}
		case inHunk && strings.HasPrefix(l, "+"):
			added[strings.Join(strings.Fields(l[1:]), "")]++
		}
	}
	flush()
	return out
}

// codeLine reports whether a line of the test file file is code: not
// blank, not a comment of its language.
func codeLine(file, l string) bool {
	t := strings.TrimSpace(l)
	if t == "" {
		return false
	}
	switch path.Ext(file) {
	case ".py", ".rb":
		return !strings.HasPrefix(t, "#")
	}
	return !strings.HasPrefix(t, "//") && !strings.HasPrefix(t, "/*") && !strings.HasPrefix(t, "*/") &&
		t != "*" && !strings.HasPrefix(t, "* ")
}

// clipLine bounds a line to n bytes, on a rune boundary.
func clipLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// testCodeExts are the extensions of the test files whose lines
// WeakenedTests reads: source code, not fixtures.
var testCodeExts = map[string]bool{".go": true, ".py": true, ".rs": true, ".rb": true, ".java": true, ".kt": true,
	".js": true, ".jsx": true, ".ts": true, ".tsx": true, ".mjs": true, ".cjs": true, ".mts": true, ".cts": true}

// IsTestCode reports whether p is a test file (IsTestFile) written in a
// programming language, not a fixture under a tests directory.
func IsTestCode(p string) bool {
	return IsTestFile(p) && testCodeExts[path.Ext(p)]
}
