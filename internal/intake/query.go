// Package intake turns the issues of a forge's tracker into the task
// sheets of a batch (`jlgcli batch --issues QUERY`), and holds the rules
// of the conversation with the tracker, as plain functions: the query's
// qualifiers, an issue read as a sheet (its title and body, its
// dependencies on other issues, its settings), the one status comment
// each issue gets and the marker that says which run wrote it, the
// labels of a claim and of an outcome, and when the tracker asks a
// running task to stop. What talks to the forge lives in local.
package intake

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/forge"
)

// ParseQuery reads a query of space-separated qualifiers, as GitHub's
// search writes them: label:NAME (every one required), assignee:LOGIN
// (or none, or * for anyone), milestone:TITLE; a value with spaces is
// quoted (label:"good first issue"). A query selects at least one
// qualifier: all the open issues of a repository are never a backlog
// by accident.
func ParseQuery(s string) (forge.IssueQuery, error) {
	var q forge.IssueQuery
	words, err := splitQuoted(s)
	if err != nil {
		return q, err
	}
	if len(words) == 0 {
		return q, usage("an empty query would take every open issue: name a label (label:agent), an assignee or a milestone")
	}
	for _, w := range words {
		key, val, ok := strings.Cut(w, ":")
		if !ok || val == "" {
			return q, usage("%q is not a qualifier: write label:NAME, assignee:LOGIN|none|*, milestone:TITLE", w)
		}
		switch strings.ToLower(key) {
		case "label":
			if !slices.Contains(q.Labels, val) {
				q.Labels = append(q.Labels, val)
			}
		case "assignee":
			if q.Assignee != "" && q.Assignee != val {
				return q, usage("two assignees (%s and %s): an issue query takes one", q.Assignee, val)
			}
			q.Assignee = val
		case "milestone":
			if q.Milestone != "" && q.Milestone != val {
				return q, usage("two milestones (%s and %s): an issue query takes one", q.Milestone, val)
			}
			q.Milestone = val
		default:
			return q, usage("unknown qualifier %q in the query (known: label, assignee, milestone)", key+":")
		}
	}
	return q, nil
}

func usage(format string, a ...any) error {
	return &exit.UsageError{Err: fmt.Errorf("--issues: "+format, a...)}
}

// splitQuoted splits s at spaces outside double quotes, the quotes
// removed (label:"good first issue" is one word).
func splitQuoted(s string) ([]string, error) {
	var words []string
	var b strings.Builder
	quoted, in := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, in = !quoted, true
		case unicode.IsSpace(r) && !quoted:
			if in {
				words = append(words, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if quoted {
		return nil, usage("a quote is not closed in %q", s)
	}
	if in {
		words = append(words, b.String())
	}
	return words, nil
}

// QueryString writes q back as qualifiers, in a stable order.
func QueryString(q forge.IssueQuery) string {
	var parts []string
	word := func(k, v string) {
		if strings.ContainsFunc(v, unicode.IsSpace) {
			v = `"` + v + `"`
		}
		parts = append(parts, k+":"+v)
	}
	for _, l := range q.Labels {
		word("label", l)
	}
	if q.Assignee != "" {
		word("assignee", q.Assignee)
	}
	if q.Milestone != "" {
		word("milestone", q.Milestone)
	}
	return strings.Join(parts, " ")
}

// Holds tells whether issue i, claimed by jlgcli, is still one that q
// selects (forge.IssueQuery.Matches): jlgcli's own assignment, made when
// it claimed the issue, does not make it leave assignee:none.
func Holds(q forge.IssueQuery, i forge.Issue) bool {
	if q.Assignee == forge.AssigneeNone {
		q.Assignee = ""
	}
	return q.Matches(i)
}
