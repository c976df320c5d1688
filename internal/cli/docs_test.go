package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestDocCommands: docs/commands.md is what the command tree gives now.
func TestDocCommands(t *testing.T) {
	got, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := CommandsPage(); string(got) != want {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(want, "\n")
		line := 0
		for line < len(gl) && line < len(wl) && gl[line] == wl[line] {
			line++
		}
		at := func(l []string) string {
			if line < len(l) {
				return strconv.Quote(l[line])
			}
			return "(end of file)"
		}
		first := "; first difference at line " + strconv.Itoa(line+1) + ": the file has " + at(gl) + ", the command tree gives " + at(wl)
		t.Errorf("docs/commands.md is out of date: run `go run ./internal/cli/docgen` (or `make docs`) and commit it%s", first)
	}
}

// link is a Markdown link's target: ](path) or ](path#anchor).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks: every relative link of README.md, CONTRIBUTING.md,
// BENCHMARKS.md and docs/*.md names a file that exists, and an anchor
// into a Markdown file names one of its headings.
func TestDocLinks(t *testing.T) {
	root := "../.."
	files := []string{"README.md", "CONTRIBUTING.md", "BENCHMARKS.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		files = append(files, rel)
	}
	anchors := map[string]map[string]bool{} // file (relative to root) → its headings' anchors
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		text, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		a := headingAnchors(string(text))
		anchors[file] = a
		return a
	}
	for _, file := range files {
		text, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range proseLines(string(text)) {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, frag, _ := strings.Cut(target, "#")
				to := file
				if path != "" {
					to = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
					if _, err := os.Stat(filepath.Join(root, to)); err != nil {
						t.Errorf("%s:%d: link to %s: no such file", file, n+1, target)
						continue
					}
				}
				if frag != "" && strings.HasSuffix(to, ".md") && !anchorsOf(to)[frag] {
					t.Errorf("%s:%d: link to %s: %s has no heading #%s", file, n+1, target, to, frag)
				}
			}
		}
	}
}

// proseLines are text's lines with those of fenced code blocks blanked,
// so that line numbers stay right.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors are the anchors GitHub gives the headings of a Markdown
// text: lower case, spaces as dashes, punctuation but - and _ dropped, a
// repeated anchor numbered -1, -2…
func headingAnchors(text string) map[string]bool {
	a := map[string]bool{}
	seen := map[string]int{}
	for _, l := range proseLines(text) {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		id := b.String()
		if k := seen[id]; k > 0 {
			a[id+"-"+strconv.Itoa(k)] = true
		} else {
			a[id] = true
		}
		seen[id]++
	}
	return a
}
