package sheet

import (
	"regexp"
	"strings"
	"unicode"
)

// heading returns the text of the body's first ATX heading ("# Title",
// up to six #), outside fenced code blocks; "" when there is none.
func heading(body string) string {
	var h string
	eachLine(body, func(_ int, line string) bool {
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 || !strings.HasPrefix(t, "#") {
			return true
		}
		n := len(t) - len(strings.TrimLeft(t, "#"))
		rest := t[n:]
		if n > 6 || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
			return true
		}
		// A closing sequence of # preceded by a space is not content.
		rest = strings.TrimSpace(rest)
		if c := strings.TrimRight(rest, "#"); c != rest && (c == "" || strings.HasSuffix(c, " ") || strings.HasSuffix(c, "\t")) {
			rest = strings.TrimSpace(c)
		}
		if rest == "" {
			return true
		}
		h = rest
		return false
	})
	return h
}

// titleIDRe matches a heading that starts with an id and a dash or a
// colon: "id051 — Implémenter …", "T-12: Add …".
var titleIDRe = regexp.MustCompile(`^([^\s:]+)(?:\s+(?:—|–|-)|\s*:)\s+\S`)

// titleID returns the id a heading starts with, "" when none.
func titleID(h string) string {
	m := titleIDRe.FindStringSubmatch(h)
	if m == nil || validID(m[1]) != "" {
		return ""
	}
	return m[1]
}

// dependsLineRe matches a dependency line of a sheet's body, in French or
// English, as a list item or not, its label in bold or not:
//
//   - Dépendance : `id050` (Runner loop de base) ✅ complété
//   - **Dépendances** : `id030`, `id042`
//     Dependency: `x`
//     Depends on: `x`, `y`
//
// French typography puts a (no-break) space before the colon.
var dependsLineRe = regexp.MustCompile(`(?i)^[ \t]{0,3}(?:[-*+][ \t]+)?(?:\*\*|__)?(?:d[ée]pendances?|dependenc(?:y|ies)|depends[ \t]+on)(?:\*\*|__)?[ \t\x{00A0}\x{202F}]*:(?:\*\*|__)?(.*)$`)

// codeSpanRe matches an inline code span of one backquote.
var codeSpanRe = regexp.MustCompile("`([^`]+)`")

// bodyRefs returns the references of the body's dependency lines: the
// code spans that hold an id, in order, each once. firstLine is the
// file line of the body's first line.
func bodyRefs(body string, firstLine int) []Ref {
	var refs []Ref
	seen := map[string]bool{}
	eachLine(body, func(n int, line string) bool {
		m := dependsLineRe.FindStringSubmatch(line)
		if m == nil {
			return true
		}
		for _, c := range codeSpanRe.FindAllStringSubmatch(m[1], -1) {
			name := strings.TrimSpace(c[1])
			if validID(name) != "" || seen[name] {
				continue
			}
			seen[name] = true
			refs = append(refs, Ref{Name: name, Line: firstLine + n})
		}
		return true
	})
	return refs
}

// eachLine calls f with each line of body outside fenced code blocks
// (``` or ~~~) and its index from 0, until f returns false.
func eachLine(body string, f func(n int, line string) bool) {
	fence := ""
	for n, line := range strings.Split(body, "\n") {
		line = strings.TrimSuffix(line, "\r")
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) <= 3 {
			if fence == "" {
				if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
					fence = t[:3]
					continue
				}
			} else {
				if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]+" \t") == "" {
					fence = ""
				}
				continue
			}
		}
		if fence != "" {
			continue
		}
		if !f(n, line) {
			return
		}
	}
}

// validID says what is wrong with id as a sheet id, "" when nothing: an id
// is not empty and has no whitespace, no "/" and no "," (a list written as
// one string).
func validID(id string) string {
	switch {
	case id == "":
		return "is empty"
	case strings.Contains(id, "/"):
		return `has a "/"`
	case strings.Contains(id, ","):
		return `has a ","`
	case strings.IndexFunc(id, unicode.IsSpace) >= 0:
		return "has whitespace"
	}
	return ""
}
