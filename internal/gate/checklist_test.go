package gate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUncheckedItems(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"none", "# Plan\n\nSome text.\n", nil},
		{"all checked", "- [x] one\n- [X] two\n", nil},
		{"markers", "- [ ] dash\n* [ ] star\n+ [ ] plus\n1. [ ] numbered\n12) [ ] paren\n", []string{"dash", "star", "plus", "numbered", "paren"}},
		{"indented and nested", "- [x] parent\n    - [ ] child\n\t- [ ] tab child\n", []string{"child", "tab child"}},
		{"mixed", "- [x] done\n- [ ] todo one\ntext - [ ] not an item\n- [ ] todo two  \n", []string{"todo one", "todo two"}},
		{"fenced code ignored", "- [ ] real\n```md\n- [ ] example\n```\n~~~~\n- [ ] tilde\n~~~\n- [ ] still in\n~~~~\n- [ ] after\n",
			[]string{"real", "after"}},
		{"indented fence in a list", "- step\n  ```\n  - [ ] code\n  ```\n- [ ] next\n", []string{"next"}},
		{"unclosed fence hides the rest", "- [ ] a\n```\n- [ ] b\n", []string{"a"}},
		{"html comment ignored", "<!-- - [ ] template -->\n<!--\n- [ ] hidden\n-->\n- [ ] shown\n", []string{"shown"}},
		{"block quote", "> - [ ] quoted\n> > - [x] deep\n", []string{"quoted"}},
		{"other marks are not boxes", "- [-] cancelled\n- [/] doing\n- [] no space\n- [ ]no space after\n", nil},
		{"empty item", "- [ ]\n- [ ]   \n", []string{"(empty item on line 1)", "(empty item on line 2)"}},
		{"CRLF and BOM", "\ufeff- [ ] one\r\n- [x] two\r\n- [ ] three\r\n", []string{"one", "three"}},
		{"no trailing newline", "- [ ] last", []string{"last"}},
		{"tab in the box", "- [\t] tabbed\n", []string{"tabbed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := uncheckedItems(tc.doc)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestUncheckedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "TODO.md")
	if err := os.WriteFile(path, []byte("- [x] a\n- [ ] b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Unchecked(path)
	if err != nil || len(got) != 1 || got[0] != "b" {
		t.Errorf("Unchecked = %q, %v", got, err)
	}
	if err := os.WriteFile(path, []byte("- [x] a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Unchecked(path); err != nil || got == nil || len(got) != 0 {
		t.Errorf("all checked: %q, %v; want an empty list", got, err)
	}
	_, err = Unchecked(filepath.Join(dir, "TODOS.md"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "TODOS.md does not exist") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Unchecked(dir); err == nil {
		t.Error("a directory gave no error")
	}
}

func TestChecklistPrompt(t *testing.T) {
	if ChecklistPrompt("TODO.md", nil) != "" {
		t.Error("no items, yet a prompt")
	}
	p := ChecklistPrompt("TODO.md", []string{"write docs", "add tests"})
	for _, want := range []string{"TODO.md still has 2 unchecked items", "- [ ] write docs\n- [ ] add tests\n", "tick each one", "Only then say the task is done"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if p := ChecklistPrompt("T.md", []string{"x"}); !strings.Contains(p, "still has an unchecked item:") {
		t.Errorf("singular: %s", p)
	}
	many := make([]string, 80)
	for i := range many {
		many[i] = strings.Repeat("é", 400)
	}
	p = ChecklistPrompt("T.md", many)
	if !strings.Contains(p, "… and 30 more.") || strings.Count(p, "- [ ] ") != maxPromptItems || len(p) > 40<<10 || !strings.Contains(p, "é…\n") {
		t.Errorf("bounded prompt of %d bytes, %d items", len(p), strings.Count(p, "- [ ] "))
	}
}
