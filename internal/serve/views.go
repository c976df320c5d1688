package serve

import (
	"fmt"

	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// gateView is an attempt's gate as its page shows it: each check with the
// failures found in its output and that output, once.
type gateView struct {
	Checks []checkView
	// Others are the failures of no check run (the anti-gaming rules').
	Others []gate.TestFailure
}

type checkView struct {
	gate.CheckReport
	// Failures are those the check's output named (tests, files).
	Failures []gate.TestFailure
	// Output is the end of a failed check's output: its own failure's
	// words when no parser understood it (they hold that end already),
	// else its output's tail.
	Output string
}

// gateOf sorts r's failures under the checks they belong to, so that a
// check's output is printed once.
func gateOf(r gate.Report) gateView {
	var v gateView
	named := map[string]int{}
	for _, c := range r.Checks {
		named[c.Name] = len(v.Checks)
		v.Checks = append(v.Checks, checkView{CheckReport: c})
	}
	for _, f := range r.TestFailures {
		i, ok := named[f.Check]
		if !ok {
			v.Others = append(v.Others, f)
			continue
		}
		c := &v.Checks[i]
		if f.Test == c.Name && c.Output == "" {
			// The check's own failure (not a test of it): its words
			// are the end of its output.
			c.Output = f.Error
			continue
		}
		c.Failures = append(c.Failures, f)
	}
	for i := range v.Checks {
		if c := &v.Checks[i]; !c.Passed && c.Output == "" {
			c.Output = c.OutputTail
		}
	}
	return v
}

// mergeWords says what became of a task's branch, in a few words.
func mergeWords(m *taskengine.MergeInfo) string {
	into := ""
	if m.Into != "" {
		into = " into " + m.Into
	}
	switch m.Status {
	case git.MergeMerged, git.MergeFastForwarded:
		s := string(m.Status) + into
		if m.Commit != "" {
			s += " as " + shortHash(m.Commit)
		}
		return s
	case git.MergeNothing:
		return "nothing to merge"
	case git.MergeSkipped:
		return "not merged, as asked (--merge none)"
	case git.MergeRefused:
		if m.Reason != "" {
			return "merge refused: " + m.Reason
		}
		return "merge refused"
	}
	return fmt.Sprintf("merge: %s", m.Status)
}

// shortHash is the first 10 characters of a commit's hash.
func shortHash(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

// MaxFilesShown bounds the files of a change a page lists: an agent may
// make them by the hundred thousand, and a task's page under way is asked
// for again every few seconds.
const MaxFilesShown = 500

// filesView is an attempt's change file by file, as its page lists it:
// each file's lines added and deleted (git's numstat), and their sums.
type filesView struct {
	Files []git.FileChange
	// Shown are the first MaxFilesShown files, More how many others.
	Shown []git.FileChange
	More  int
	// Added and Deleted sum the text files' lines; Binary counts the
	// binary files (whose lines git does not count).
	Added, Deleted, Binary int
}

// filesOf is the view of the files of a change.
func filesOf(files []git.FileChange) filesView {
	v := filesView{Files: files, Shown: files[:min(len(files), MaxFilesShown)], More: max(len(files)-MaxFilesShown, 0)}
	for _, f := range files {
		if f.Binary() {
			v.Binary++
			continue
		}
		v.Added += f.Added
		v.Deleted += f.Deleted
	}
	return v
}
