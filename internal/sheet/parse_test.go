package sheet

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		name, file, data string
		want             Sheet
		warns            []string
	}{
		{
			name: "no front matter", file: "tasks/add-login.md",
			data: "# Add a login page\n\nDo it.\n",
			want: Sheet{ID: "add-login", Title: "Add a login page", Body: "# Add a login page\n\nDo it.\n"},
		},
		{
			name: "no heading: the id is the title", file: "x/fix.md",
			data: "Fix the bug.\n",
			want: Sheet{ID: "fix", Title: "fix", Body: "Fix the bug.\n"},
		},
		{
			name: "every key", file: "a.md",
			data: "---\nid: auth\ndescription: Add auth\ndepends: [db, api]\ntiers: [claude:haiku, 'claude:opus']\n" +
				"attempts: 2\nbudget: 1.5\nchecks:\n  - go test ./...\n  - go vet ./...\ntimeout: 45m\neditTests: true\nreview: codex:gpt-5\n---\n\n# Heading\nBody\n",
			want: Sheet{ID: "auth", Title: "Add auth", Body: "# Heading\nBody\n", Depends: []string{"db", "api"}, DependsFrom: FromFrontMatter,
				Tiers: []string{"claude:haiku", "claude:opus"}, Attempts: 2, BudgetUSD: 1.5,
				Checks: []string{"go test ./...", "go vet ./..."}, Timeout: 45 * time.Minute, EditTests: true, Review: "codex:gpt-5",
				Set: FieldID | FieldDescription | FieldDepends | FieldTiers | FieldAttempts | FieldBudget | FieldChecks | FieldTimeout | FieldEditTests | FieldReview},
		},
		{
			name: "backend and model, depends as one string, integer budget", file: "b.md",
			data: "---\nbackend: codex\nmodel: gpt-5\ndepends: a\nbudget: 2\n---\nText",
			want: Sheet{ID: "b", Title: "b", Body: "Text", Backend: "codex", Model: "gpt-5", Depends: []string{"a"}, DependsFrom: FromFrontMatter,
				BudgetUSD: 2, Set: FieldBackend | FieldModel | FieldDepends | FieldBudget},
		},
		{
			name: "editor keys ignored, unknown keys warned with a hint", file: "c.md",
			data: "---\nagent: agent\nmode: edit\ntools: [a, b]\ntitle: x\ncolour: red\nDepends: [a]\n---\n# T\n",
			want: Sheet{ID: "c", Title: "T", Body: "# T\n"},
			warns: []string{`c.md:5: unknown front-matter key "title", ignored (did you mean "description"?)`,
				`c.md:6: unknown front-matter key "colour", ignored`,
				`c.md:7: unknown front-matter key "Depends", ignored (did you mean "depends"?)`},
		},
		{
			name: "empty front matter, CRLF, byte-order mark", file: "d.md",
			data: "\xef\xbb\xbf---\r\n---\r\n# Title #\r\nx\r\n",
			want: Sheet{ID: "d", Title: "Title", Body: "# Title #\r\nx\r\n"},
		},
		{
			name: "front matter of comments only, closed by ...", file: "e.md",
			data: "---\n# nothing\n...\nbody",
			want: Sheet{ID: "e", Title: "e", Body: "body"},
		},
		{
			name: "a --- later in the file is no front matter", file: "f.md",
			data: "# F\n---\nid: x\n---\n",
			want: Sheet{ID: "f", Title: "F", Body: "# F\n---\nid: x\n---\n"},
		},
		{
			name: "id from the front matter; numbers as written", file: "g.md",
			data: "---\nid: 051\ndescription: 42\n---\n",
			want: Sheet{ID: "051", Title: "42", Set: FieldID | FieldDescription},
		},
		{
			name: "duplicate depends warned", file: "h.md",
			data:  "---\ndepends:\n  - a\n  - a\n---\n",
			want:  Sheet{ID: "h", Title: "h", Depends: []string{"a"}, DependsFrom: FromFrontMatter, Set: FieldDepends},
			warns: []string{`h.md:4: depends names "a" twice`},
		},
		{
			name: "depends: [] turns the body's dependency lines off", file: "i.md",
			data: "---\ndepends: []\n---\n- Dependency: `a`\n",
			want: Sheet{ID: "i", Title: "i", Body: "- Dependency: `a`\n", Depends: []string{}, DependsFrom: FromFrontMatter, Set: FieldDepends},
		},
		{
			name: "body dependency lines", file: "j.md",
			data: "---\nid: j\n---\n# id052 — Next\n\n- Dépendance : `id050` (base) ✅ complété\n" +
				"**Depends on**: `x`, `y`, `id050`, `src/a.go`\nDependencies: none\n" +
				"```\nDependency: `in-code`\n```\nThis depends on: `prose`\n",
			want: Sheet{ID: "j", Title: "id052 — Next", TitleID: "id052",
				Body: "# id052 — Next\n\n- Dépendance : `id050` (base) ✅ complété\n" +
					"**Depends on**: `x`, `y`, `id050`, `src/a.go`\nDependencies: none\n```\nDependency: `in-code`\n```\nThis depends on: `prose`\n",
				Depends: []string{"id050", "x", "y"}, DependsFrom: FromBody,
				BodyRefs: []Ref{{Name: "id050", Line: 6}, {Name: "x", Line: 7}, {Name: "y", Line: 7}}, Set: FieldID},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.File = tt.file
			s, w, err := Parse(tt.file, []byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, s, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("sheet (-want +got):\n%s", d)
			}
			if tt.want.Depends != nil && s.Depends == nil {
				t.Error("Depends is nil, want an empty list")
			}
			if d := cmp.Diff(tt.warns, warnings(w), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("warnings (-want +got):\n%s", d)
			}
		})
	}
}

func warnings(ws []Warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.String())
	}
	return out
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct {
		name, file, data string
		line             int
		key, msg         string
	}{
		{"not closed", "a.md", "---\nid: a\n# body\n", 1, "", `a.md:1: the front matter opened here is not closed by a "---" line`},
		{"not closed, empty", "a.md", "---", 1, "", `a.md:1: the front matter opened here is not closed`},
		{"bad YAML", "a.md", "---\nid: a\ndepends: [a\nbudget: 1\n---\n", 0, "", "a.md:"},
		{"bad indentation", "a.md", "---\nid: a\n  x: 1\n---\n", 3, "", "a.md:3: the front matter is not valid YAML: "},
		{"not a mapping", "a.md", "---\n- a\n- b\n---\n", 2, "", "a.md:2: the front matter is not a mapping of keys to values"},
		{"key twice", "a.md", "---\nid: a\nid: b\n---\n", 3, "id", "a.md:3: id: set twice (first at line 2)"},
		{"id with space", "a.md", "---\nid: a b\n---\n", 2, "id", `a.md:2: id: "a b" has whitespace`},
		{"id with slash", "a.md", "---\nid: a/b\n---\n", 2, "id", `a.md:2: id: "a/b" has a "/"`},
		{"id empty", "a.md", "---\nid: ''\n---\n", 2, "id", `a.md:2: id: "" is empty`},
		{"id null", "a.md", "---\nid:\n---\n", 2, "id", `a.md:2: id: want an id, got nothing`},
		{"id a list", "a.md", "---\nid: [a]\n---\n", 2, "id", `a.md:2: id: want an id, got a list`},
		{"file name not an id", "dir/my task.md", "x", 0, "", `dir/my task.md: the id "my task", taken from the file name, has whitespace: set id in the front matter`},
		{"attempts zero", "a.md", "---\nattempts: 0\n---\n", 2, "attempts", "a.md:2: attempts: 0: want 1 or more"},
		{"attempts text", "a.md", "---\nattempts: three\n---\n", 2, "attempts", `a.md:2: attempts: want a whole number of 1 or more, got "three"`},
		{"attempts float", "a.md", "---\nattempts: 2.5\n---\n", 2, "attempts", `got "2.5"`},
		{"budget zero", "a.md", "---\nbudget: 0\n---\n", 2, "budget", "a.md:2: budget: 0: want an amount greater than 0"},
		{"budget negative", "a.md", "---\nbudget: -1\n---\n", 2, "budget", "want an amount greater than 0"},
		{"budget infinite", "a.md", "---\nbudget: .inf\n---\n", 2, "budget", "want an amount greater than 0"},
		{"budget NaN", "a.md", "---\nbudget: .nan\n---\n", 2, "budget", "want an amount greater than 0"},
		{"budget dollars", "a.md", "---\nbudget: $2\n---\n", 2, "budget", `a.md:2: budget: want an amount of US dollars such as 1.50, got "$2"`},
		{"timeout bad", "a.md", "---\ntimeout: 5 minutes\n---\n", 2, "timeout", `a.md:2: timeout: "5 minutes" is not a duration such as 90s, 5m or 1h30m`},
		{"timeout number", "a.md", "---\ntimeout: 90\n---\n", 2, "timeout", `a.md:2: timeout: "90" has no unit; write 90s, 90m or 90h`},
		{"timeout text without unit", "a.md", "---\ntimeout: '5'\n---\n", 2, "timeout", `a.md:2: timeout: "5" has no unit; write 5s, 5m or 5h`},
		{"timeout a list", "a.md", "---\ntimeout: [5m]\n---\n", 2, "timeout", `a.md:2: timeout: want a duration such as 90s, 30m or 1h30m, got a list`},
		{"editTests not a bool", "a.md", "---\neditTests: yes please\n---\n", 2, "editTests", `a.md:2: editTests: want true or false, got "yes please"`},
		{"review a list", "a.md", "---\nreview: [codex]\n---\n", 2, "review", `a.md:2: review: want BACKEND[:MODEL] or none, got a list`},
		{"review without backend", "a.md", "---\nreview: ':opus'\n---\n", 2, "review", `":opus": want BACKEND[:MODEL] or none`},
		{"timeout zero", "a.md", "---\ntimeout: 0s\n---\n", 2, "timeout", `a.md:2: timeout: "0s": want a duration greater than 0`},
		{"tiers empty item", "a.md", "---\ntiers:\n  - claude\n  - ''\n---\n", 4, "tiers", `a.md:4: tiers: "": want BACKEND[:MODEL]`},
		{"tiers without backend", "a.md", "---\ntiers: [':opus']\n---\n", 2, "tiers", `":opus": want BACKEND[:MODEL]`},
		{"tiers empty", "a.md", "---\ntiers: []\n---\n", 2, "tiers", "a.md:2: tiers: is empty"},
		{"tiers a mapping", "a.md", "---\ntiers: {a: b}\n---\n", 2, "tiers", "want a list of strings, got a mapping"},
		{"tiers and backend", "a.md", "---\nbackend: claude\ntiers: [codex]\n---\n", 3, "tiers", "a.md:3: tiers: tiers and backend are both set"},
		{"tiers and model", "a.md", "---\ntiers: [codex]\nmodel: opus\n---\n", 2, "tiers", "tiers and model are both set"},
		{"backend empty", "a.md", "---\nbackend: ' '\n---\n", 2, "backend", "a.md:2: backend: is empty"},
		{"model a number list", "a.md", "---\nmodel: [1]\n---\n", 2, "model", "want a name, got a list"},
		{"checks empty command", "a.md", "---\nchecks: ['go test', '  ']\n---\n", 2, "checks", "a.md:2: checks: a check is an empty command line"},
		{"checks empty", "a.md", "---\nchecks: []\n---\n", 2, "checks", "is empty"},
		{"checks a list of lists", "a.md", "---\nchecks:\n  - [go, test]\n---\n", 3, "checks", "a.md:3: checks: want a list of strings, got a list in it"},
		{"depends a list as one string", "a.md", "---\ndepends: a, b\n---\n", 2, "depends", `a.md:2: depends: "a, b" has a ",": give one id per item`},
		{"depends bad item", "a.md", "---\ndepends:\n  - a\n  - b/c\n---\n", 4, "depends", `a.md:4: depends: "b/c" has a "/"`},
		{"depends a mapping", "a.md", "---\ndepends: {a: 1}\n---\n", 2, "depends", "want a list of strings"},
		{"description a mapping", "a.md", "---\ndescription: {a: 1}\n---\n", 2, "description", "want a line of text, got a mapping"},
		{"key not a name", "a.md", "---\n[a]: 1\n---\n", 2, "", "a front-matter key is not a name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse(tt.file, []byte(tt.data))
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T), want an *Error", err, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q lacks %q", err, tt.msg)
			}
			if se.File != tt.file || tt.line > 0 && se.Line != tt.line || se.Key != tt.key {
				t.Errorf("error at %s:%d key %q; want %s:%d key %q", se.File, se.Line, se.Key, tt.file, tt.line, tt.key)
			}
		})
	}
}

// TestBadYAMLLine: a syntax error is reported at its line in the file,
// not in the front matter. The YAML library gives the line where the
// construct that failed starts, or where it noticed the problem.
func TestBadYAMLLine(t *testing.T) {
	for _, tt := range []struct {
		fm   string
		line int
	}{
		{"id: a\ndescription: x\nbudget: [1\ntimeout: 1m\n", 4}, // parser: where [ opens
		{"id: a\ndescription: {x: 1\n", 3},                      // parser
		{"depends: [a\n", 3},                                    // parser, first line: the end of the front matter
		{"id: a\n- b\n", 3},                                     // parser: did not find expected key
		{"id: a\n  x: 1\n", 3},                                  // scanner
		{"id: a\ndescription: \"x\n", 3},                        // scanner
		{"id: a\ndescription: x\n\ttimeout: 1m\n", 3},           // scanner: the library points at the line before the tab
		{"id: a\ndescription: !foo!x 1\n", 3},                   // parser: undefined tag handle
		{"id: a\nitems:\n  - a\n  b: c\n", 4},                   // parser: where the list starts
	} {
		_, _, err := Parse("a.md", []byte("---\n"+tt.fm+"---\n"))
		var se *Error
		if !errors.As(err, &se) || se.Line != tt.line {
			t.Errorf("%q: got %v; want an error at line %d", tt.fm, err, tt.line)
		}
	}
}

// TestSeeds parses the seeds' own task sheets (kept as they are in
// testdata).
func TestSeeds(t *testing.T) {
	for _, tt := range []struct {
		file, id, titleID, title string
		refs                     []Ref
	}{
		{"testdata/000_ea6cb0108f1561cc.txt", "000_ea6cb0108f1561cc", "id051",
			"Implémenter la détection de non-progrès (noProgressLimit) pour stopper la boucle si la sortie est identique N fois consécutives",
			[]Ref{{Name: "id050", Line: 18}}},
		{"testdata/001_d8f994fbe3b452ef.txt", "001_d8f994fbe3b452ef", "id050",
			"Implémenter le Runner loop avec garde-fous maxIterations et timeout",
			[]Ref{{Name: "id030", Line: 19}, {Name: "id042", Line: 19}}},
	} {
		t.Run(tt.id, func(t *testing.T) {
			data, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			s, w, err := Parse(tt.file, data)
			if err != nil {
				t.Fatal(err)
			}
			if len(w) != 0 {
				t.Errorf("warnings: %v", w)
			}
			if s.ID != tt.id || s.TitleID != tt.titleID || s.Title != tt.title {
				t.Errorf("id %q, title id %q, title %q", s.ID, s.TitleID, s.Title)
			}
			if s.Set != FieldDescription {
				t.Errorf("set %b, want only description", s.Set)
			}
			if d := cmp.Diff(tt.refs, s.BodyRefs); d != "" {
				t.Errorf("body refs (-want +got):\n%s", d)
			}
			if s.DependsFrom != FromBody || len(s.Depends) != len(tt.refs) {
				t.Errorf("depends %v from %q", s.Depends, s.DependsFrom)
			}
			if !strings.HasPrefix(s.Body, "# "+tt.titleID+" — ") || strings.Contains(s.Body, "agent: agent") {
				t.Errorf("body starts %q", s.Body[:min(len(s.Body), 60)])
			}
			if !strings.HasSuffix(string(data), s.Body) {
				t.Error("the body is not the file's text after the front matter")
			}
		})
	}
}

func TestHeading(t *testing.T) {
	for in, want := range map[string]string{
		"# A":                       "A",
		"text\n## B ##\n# C":        "B",
		"#NotAHeading\n# D":         "D",
		"    # code\n# E":           "E",
		"```\n# in code\n```\n# F":  "F",
		"~~~go\n# x\n~~~\n#   G  #": "G",
		"####### seven\n# H":        "H",
		"# C# ok":                   "C# ok",
		"#\n# I":                    "I",
		"none":                      "",
	} {
		if got := heading(in); got != want {
			t.Errorf("heading(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"id051 — Implémenter": "id051",
		"T-12: Add login":     "T-12",
		"auth - Add login":    "auth",
		"Add the login page":  "",
		"a/b — x":             "",
		"id051 —":             "",
	} {
		if got := titleID(in); got != want {
			t.Errorf("titleID(%q) = %q, want %q", in, got, want)
		}
	}
}
