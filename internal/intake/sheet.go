package intake

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/sheet"
)

// IDOf is the id of issue n's task in its batch; NumberOf reads it back
// (0 for an id that is not an issue's).
func IDOf(n int) string { return "issue-" + strconv.Itoa(n) }

// NumberOf is the issue number of task id ("issue-7" → 7), 0 for another id.
func NumberOf(id string) int {
	s, ok := strings.CutPrefix(id, "issue-")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || strconv.Itoa(n) != s {
		return 0
	}
	return n
}

// dependsRe finds the issues a body depends on: "depends on #3",
// "blocked by #3, #4 and #5", "Depends on: #3" (case aside).
var (
	dependsRe = regexp.MustCompile(`(?i)\b(?:depends\s+on|blocked\s+by)\s*:?\s*((?:#\d+(?:\s*(?:,|and|&)\s*)?)+)`)
	numberRe  = regexp.MustCompile(`#(\d+)`)
)

// Depends are the numbers of the issues the body of an issue says it
// depends on, in order, each once; lines inside fenced code are not read.
func Depends(body string) []int {
	var out []int
	for _, line := range proseLines(body) {
		for _, m := range dependsRe.FindAllStringSubmatch(line, -1) {
			for _, n := range numberRe.FindAllStringSubmatch(m[1], -1) {
				v, err := strconv.Atoi(n[1])
				if err == nil && v > 0 && !slices.Contains(out, v) {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// proseLines are the lines of a Markdown text outside fenced code.
func proseLines(body string) []string {
	var out []string
	fence := ""
	for _, line := range strings.Split(body, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case fence == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			fence = t[:3]
		case fence != "" && strings.HasPrefix(t, fence):
			fence = ""
		case fence == "":
			out = append(out, line)
		}
	}
	return out
}

// SheetOf reads issue i as a task sheet: id issue-N, its title the
// issue's, its text the title as a heading and the body; a front matter
// at the top of the body (between "---" lines, as a sheet's) and labels
// of the form key:value give its settings; "depends on #N" and "blocked
// by #N" lines, or the front matter's depends (#N, N or issue-N), its
// dependencies, as issue ids.
//
// trusted says whether the issue's author may push to the repository (or
// is trusted by the configuration): the settings of an issue from
// anyone else are not taken — its checks would be commands anyone could
// have the gate run, its tiers and budget a way to spend the user's
// money — and the warnings say so; its text is still the task. An error
// is a body that cannot be read as a sheet: that issue alone fails, with
// the reason.
func SheetOf(i forge.Issue, trusted bool) (sheet.Sheet, []string, error) {
	name := fmt.Sprintf("issue #%d", i.Number)
	body := strings.ReplaceAll(i.Body, "\r\n", "\n")
	var fm string
	if strings.HasPrefix(body, "---\n") {
		if end := strings.Index(body[4:], "\n---"); end >= 0 {
			rest := body[4+end+4:]
			if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
				rest = rest[nl+1:]
			} else {
				rest = ""
			}
			fm, body = body[:4+end+4]+"\n", rest
		}
	}
	title := strings.TrimSpace(i.Title)
	if title == "" {
		title = name
	}
	text := "# " + title + "\n\n" + strings.TrimSpace(body) + "\n"
	var warns []string
	if fm != "" && !trusted {
		warns = append(warns, fmt.Sprintf("the settings at the top of %s are not taken: %s cannot push to the repository (list them in trust to take them)", name, who(i.Author)))
		fm = ""
	}
	// The file's name gives the sheet its id; what it says names the issue.
	s, sw, err := sheet.Parse(IDOf(i.Number), []byte(fm+text))
	if se, ok := err.(*sheet.Error); ok {
		se.File = name
	}
	if err != nil {
		return sheet.Sheet{}, warns, err
	}
	for _, w := range sw {
		w.File = name
		warns = append(warns, w.String())
	}
	s.File = name
	s.ID, s.Title, s.TitleID = IDOf(i.Number), title, ""
	s.Set |= sheet.FieldID | sheet.FieldDescription
	if s.Has(sheet.FieldDepends) {
		deps := make([]string, 0, len(s.Depends))
		for _, d := range s.Depends {
			n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(d, "#"), "issue-"))
			if err != nil || n <= 0 {
				return sheet.Sheet{}, warns, &sheet.Error{File: name, Key: "depends", Msg: fmt.Sprintf("%q is not an issue: write #N", d)}
			}
			deps = append(deps, IDOf(n))
		}
		s.Depends = deps
	} else {
		s.Depends, s.BodyRefs = nil, nil
		for _, n := range Depends(body) {
			if n != i.Number {
				s.Depends = append(s.Depends, IDOf(n))
			}
		}
		s.DependsFrom = sheet.FromNone
		if len(s.Depends) > 0 {
			s.DependsFrom = sheet.FromFrontMatter // every one must be settled: none is dropped
			s.Set |= sheet.FieldDepends
		}
	}
	if trusted {
		if err := labelSettings(&s, i.Labels); err != nil {
			return sheet.Sheet{}, warns, err
		}
	}
	return s, warns, nil
}

func who(login string) string {
	if login == "" {
		return "its author"
	}
	return "its author " + login
}

// labelSettings sets what s's front matter does not from its labels
// key:value, each read as the front matter's key is (a budget is a
// number, an attempts count a whole one).
func labelSettings(s *sheet.Sheet, labels []string) error {
	fields := map[string]sheet.Field{"backend": sheet.FieldBackend, "model": sheet.FieldModel,
		"budget": sheet.FieldBudget, "attempts": sheet.FieldAttempts}
	var fm strings.Builder
	for _, l := range labels {
		k, v, ok := strings.Cut(l, ":")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		f, known := fields[k]
		if !ok || !known || s.Has(f) || (f == sheet.FieldBackend || f == sheet.FieldModel) && s.Has(sheet.FieldTiers) {
			continue
		}
		if f == sheet.FieldBudget || f == sheet.FieldAttempts {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return &sheet.Error{File: s.File, Key: k, Msg: fmt.Sprintf("the label %q is not a number", l)}
			}
			fmt.Fprintf(&fm, "%s: %s\n", k, v)
		} else {
			fmt.Fprintf(&fm, "%s: %s\n", k, strconv.Quote(v))
		}
	}
	if fm.Len() == 0 {
		return nil
	}
	ls, _, err := sheet.Parse("labels", []byte("---\n"+fm.String()+"---\n"))
	if se, ok := err.(*sheet.Error); ok {
		se.File, se.Line = "the labels of "+s.File, 0
	}
	if err != nil {
		return err
	}
	if ls.Has(sheet.FieldBackend) {
		s.Backend = ls.Backend
	}
	if ls.Has(sheet.FieldModel) {
		s.Model = ls.Model
	}
	if ls.Has(sheet.FieldBudget) {
		s.BudgetUSD = ls.BudgetUSD
	}
	if ls.Has(sheet.FieldAttempts) {
		s.Attempts = ls.Attempts
	}
	s.Set |= ls.Set &^ (sheet.FieldID | sheet.FieldDescription)
	return nil
}
