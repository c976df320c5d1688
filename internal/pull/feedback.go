package pull

import (
	"fmt"
	"strings"

	"github.com/jlgcli/jlgcli/internal/forge"
)

// The bounds of what Needs.Prompt quotes of each blocker.
const (
	MaxLogTail  = 6 << 10
	MaxHunk     = 2 << 10
	MaxComment  = 2 << 10
	MaxFeedback = 24 << 10
)

// Needs is what an attempt is told of a pull request: its blockers, what
// the forge tells of each failed check, and, for a conflict, the files the
// merge of the base left with conflict markers in the attempt's tree.
type Needs struct {
	PR       forge.PR
	Target   Target
	Self     string
	Blockers []Blocker
	// Failures are the forge's word on each failed check, by name.
	Failures map[string]forge.Failure
	// Conflicted are the files with conflict markers, when the base was
	// merged into the tree.
	Conflicted []string
}

// Prompt is the section of the developer's prompt that says what the pull
// request needs, as a senior engineer would want it: each failed check's
// name, failing step and log tail (or annotations), each thread's file,
// line, hunk and words, each review asking for changes, each conflict.
func (n Needs) Prompt() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## What pull request #%d needs\n\n", n.PR.Number)
	fmt.Fprintf(&b, "Your change is pull request #%d (%s) from branch %s into %s. It is not %s yet: ", n.PR.Number, n.PR.URL, n.PR.Head, n.PR.Base, n.Target)
	b.WriteString(listed(n.Blockers))
	b.WriteString(". Address each point below in the working tree (which holds the pull request's head); the checks are run again on your change before it is pushed to the same branch. Do not weaken a test or a check to make it pass.\n")
	for _, bl := range n.Blockers {
		switch bl.Kind {
		case FailedCheck:
			n.check(&b, *bl.Check)
		case OpenThread:
			n.thread(&b, *bl.Thread)
		case ChangesRequested:
			r := bl.Review
			fmt.Fprintf(&b, "\n### %s asked for changes\n\n", r.Author)
			if body := strings.TrimSpace(r.Body); body != "" {
				b.WriteString(quote(cut(body, MaxComment)))
			} else {
				b.WriteString("(no words beside the review's line comments, listed as threads)\n")
			}
		case Conflict:
			fmt.Fprintf(&b, "\n### A conflict with %s\n\n", bl.Base)
			if len(n.Conflicted) > 0 {
				fmt.Fprintf(&b, "%s (at %s) has been merged into your working tree and left conflict markers (<<<<<<<, =======, >>>>>>>) in: %s. Resolve each one, keeping what both sides meant; leave no marker.\n",
					bl.Base, short(bl.BaseSHA), strings.Join(n.Conflicted, ", "))
			} else {
				fmt.Fprintf(&b, "The branch conflicts with %s (at %s).\n", bl.Base, short(bl.BaseSHA))
			}
		}
	}
	s := b.String()
	if len(s) > MaxFeedback {
		s = s[:MaxFeedback] + "\n(cut: the rest is on the pull request's page)\n"
	}
	return s
}

func (n Needs) check(b *strings.Builder, c forge.Check) {
	fmt.Fprintf(b, "\n### Check %q %s\n\n", c.Name, checkWord(&c))
	if c.Description != "" {
		fmt.Fprintf(b, "%s\n", oneLine(c.Description, 300))
	}
	if c.URL != "" {
		fmt.Fprintf(b, "Its page: %s\n", c.URL)
	}
	f, ok := n.Failures[c.Name]
	if !ok {
		return
	}
	if f.Step != "" {
		fmt.Fprintf(b, "Failing step: %s\n", oneLine(f.Step, 200))
	}
	if t := strings.TrimSpace(f.Title); t != "" {
		fmt.Fprintf(b, "%s\n", oneLine(t, 200))
	}
	if s := strings.TrimSpace(f.Summary); s != "" {
		b.WriteString("\n" + fence(cut(s, MaxComment), ""))
	}
	for i, a := range f.Annotations {
		if i == 20 {
			fmt.Fprintf(b, "- (%d more annotations)\n", len(f.Annotations)-i)
			break
		}
		line := a.Path
		if a.StartLine > 0 {
			line = fmt.Sprintf("%s:%d", a.Path, a.StartLine)
		}
		fmt.Fprintf(b, "- %s %s: %s %s\n", line, a.Level, oneLine(a.Title, 120), oneLine(a.Message, 300))
	}
	if t := strings.TrimSpace(f.LogTail); t != "" {
		b.WriteString("\nThe end of its log:\n\n" + fence(tail(t, MaxLogTail), ""))
	} else if t := strings.TrimSpace(f.Text); t != "" {
		b.WriteString("\n" + fence(tail(t, MaxLogTail), ""))
	}
}

func (n Needs) thread(b *strings.Builder, t forge.Thread) {
	fmt.Fprintf(b, "\n### Review thread on %s\n\n", where(t))
	if h := strings.TrimSpace(t.DiffHunk); h != "" {
		b.WriteString(fence(tail(h, MaxHunk), "diff"))
	}
	for _, c := range t.Comments {
		if c.Author == n.Self {
			continue
		}
		fmt.Fprintf(b, "\n%s wrote:\n%s", c.Author, quote(cut(strings.TrimSpace(c.Body), MaxComment)))
	}
}

// fence puts s in a code fence longer than any run of backticks in it.
func fence(s, lang string) string {
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	return f + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + f + "\n"
}

func quote(s string) string {
	return "> " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n> ") + "\n"
}

// cut is s's first n bytes, at a line's end where one is near.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	if i := strings.LastIndexByte(s, '\n'); i > n/2 {
		s = s[:i]
	}
	return s + "\n(cut)"
}

// tail is s's last n bytes, from a line's start where one is near.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < n/2 {
		s = s[i+1:]
	}
	return "(earlier lines cut)\n" + s
}
