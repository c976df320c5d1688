package gate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
)

// MaxChecklistBytes bounds the checklist file that Unchecked reads.
const MaxChecklistBytes = 8 << 20

// Unchecked returns the text of each unchecked task-list item of the
// Markdown file at path, in order: `- [ ] text`, also with `*` or `+`, in a
// numbered list (`1. [ ]`, `1) [ ]`), at any indentation, and in a block
// quote. `[x]` and `[X]` are checked; any other mark (`[-]`, `[/]`) is not a
// task box of GitHub's and is ignored, as are items inside fenced code
// blocks (``` or ~~~) and HTML comments. An item with no text is reported as
// "(empty item on line N)".
//
// A missing file is an error that wraps fs.ErrNotExist, never "all checked":
// a mistyped --checklist must not let done through.
func Unchecked(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("checklist %s does not exist: %w", path, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("checklist: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxChecklistBytes+1))
	if err != nil {
		return nil, fmt.Errorf("checklist %s: %w", path, err)
	}
	if len(data) > MaxChecklistBytes {
		return nil, fmt.Errorf("checklist %s is larger than %d MiB", path, MaxChecklistBytes>>20)
	}
	return uncheckedItems(string(data)), nil
}

// taskRE matches a task-list item: list marker, box, text. The leading block
// quote markers are removed before.
var taskRE = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,9}[.)])\s+\[([ \txX])\](?:\s+(.*?))?\s*$`)

func uncheckedItems(doc string) []string {
	doc = strings.TrimPrefix(doc, "\ufeff")
	items := []string{}
	var fence string // the opening fence while inside a code block
	inComment := false
	n := 0
	for line := range strings.Lines(doc) {
		n++
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimLeft(line, " \t")
		if fence != "" {
			if closesFence(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if inComment {
			if strings.Contains(line, "-->") {
				inComment = false
			}
			continue
		}
		if f := openingFence(unquote(trimmed)); f != "" {
			fence = f
			continue
		}
		if strings.HasPrefix(trimmed, "<!--") {
			inComment = !strings.Contains(trimmed[4:], "-->")
			continue
		}
		m := taskRE.FindStringSubmatch(unquote(line))
		if m == nil || (m[1] != " " && m[1] != "\t") {
			continue
		}
		text := strings.TrimSpace(m[2])
		if text == "" {
			text = fmt.Sprintf("(empty item on line %d)", n)
		}
		items = append(items, text)
	}
	return items
}

// unquote removes block quote markers (`> `) from the start of a line.
func unquote(line string) string {
	for {
		t := strings.TrimLeft(line, " \t")
		if !strings.HasPrefix(t, ">") {
			return line
		}
		line = t[1:]
	}
}

// openingFence returns the fence that s opens (three or more backticks or
// tildes), or "".
func openingFence(s string) string {
	s = strings.TrimLeft(s, " \t")
	if len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return ""
	}
	n := 0
	for n < len(s) && s[n] == s[0] {
		n++
	}
	if n < 3 || (s[0] == '`' && strings.Contains(s[n:], "`")) {
		return ""
	}
	return s[:n]
}

// closesFence reports whether s closes a block opened by fence: the same
// character, at least as many, and nothing after.
func closesFence(s, fence string) bool {
	s = strings.TrimSpace(unquote(s))
	if len(s) < len(fence) || s[0] != fence[0] {
		return false
	}
	return strings.Trim(s, fence[:1]) == ""
}

// Bounds of ChecklistPrompt.
const (
	maxPromptItems    = 50
	maxPromptItemText = 300
)

// ChecklistPrompt is the continuation text for a checklist file that still
// has unchecked items: it lists them (at most 50) and asks the agent to do
// them and tick them before saying done. It is "" when items is empty. It
// says nothing of how to signal done: the engine adds that.
func ChecklistPrompt(file string, items []string) string {
	if len(items) == 0 {
		return ""
	}
	var b strings.Builder
	if len(items) == 1 {
		fmt.Fprintf(&b, "The task is not done yet: the checklist %s still has an unchecked item:\n", file)
	} else {
		fmt.Fprintf(&b, "The task is not done yet: the checklist %s still has %d unchecked items:\n", file, len(items))
	}
	for i, it := range items {
		if i == maxPromptItems {
			fmt.Fprintf(&b, "… and %d more.\n", len(items)-i)
			break
		}
		if len(it) > maxPromptItemText {
			cut := maxPromptItemText
			for cut > 0 && it[cut]&0xC0 == 0x80 {
				cut--
			}
			it = it[:cut] + "…"
		}
		b.WriteString("- [ ] " + strings.ReplaceAll(it, "\n", " ") + "\n")
	}
	fmt.Fprintf(&b, "\nDo each of them now, and tick each one (`- [x]`) in %s once it is really done; "+
		"do not tick an item you have not done, and do not delete items. Only then say the task is done.\n", file)
	return b.String()
}
