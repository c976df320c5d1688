package cli_test

// The issues of the forge script command (forge_script_test.go), for the
// scripts of batch --issues (issues_*.txtar):
//
//	forge issue [-as USER] [-labels L1,L2] VAR TITLE BODY
//	    opens an issue as USER (admin, ci, reviewer or passerby; default
//	    reviewer, someone else with write access), BODY with Go's escapes,
//	    labelled (the labels made when missing), and sets $VAR to its
//	    number.
//	issue-close N [USER]           closes issue N as USER (default reviewer).
//	issue-comment N USER TEXT      comments TEXT (Go's escapes) on N as USER.
//	issue-unlabel N LABEL          takes LABEL off N (as the admin).
//	issue-state N open|closed      fails unless N is in that state.
//	issue-labels N L1,L2|-         fails unless N's labels are exactly these
//	                               (sorted; - for none).
//	issue-assignees N A1,A2|-      the same for its assignees.
//	wait-issue-label N LABEL       waits, up to the hang guard, until N has
//	                               LABEL.

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/jlgcli/jlgcli/internal/forge/giteatest"
)

func init() {
	forgeSubs["issue"] = forgeIssue
	forgeSubs["issue-close"] = forgeIssueClose
	forgeSubs["issue-comment"] = forgeIssueComment
	forgeSubs["issue-unlabel"] = forgeIssueUnlabel
	forgeSubs["issue-state"] = forgeIssueState
	forgeSubs["issue-labels"] = func(ts *testscript.TestScript, args []string) { forgeIssueList(ts, "labels", args) }
	forgeSubs["issue-assignees"] = func(ts *testscript.TestScript, args []string) { forgeIssueList(ts, "assignees", args) }
	forgeSubs["wait-issue-label"] = forgeWaitIssueLabel
}

// forgeUser is the user a script names.
func forgeUser(ts *testscript.TestScript, name string) giteatest.User {
	w := worldOf(ts)
	switch name {
	case "admin", giteatest.AdminName:
		return w.srv.Admin
	case giteatest.CIName:
		return w.srv.CI
	case giteatest.ReviewerName:
		return w.srv.Reviewer
	case giteatest.OutsiderName:
		return w.srv.Outsider
	}
	ts.Fatalf("unknown user %q (admin, ci, reviewer, passerby)", name)
	return giteatest.User{}
}

func forgeIssue(ts *testscript.TestScript, args []string) {
	as, labels := "reviewer", []string(nil)
	for len(args) > 1 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-as":
			as = args[1]
		case "-labels":
			labels = strings.Split(args[1], ",")
		default:
			ts.Fatalf("unknown option %s", args[0])
		}
		args = args[2:]
	}
	if len(args) != 3 {
		ts.Fatalf("usage: forge issue [-as USER] [-labels L1,L2] VAR TITLE BODY")
	}
	w := worldOf(ts)
	n, err := w.repo.NewIssue(w.ctx, forgeUser(ts, as), goUnescape(ts, args[1]), goUnescape(ts, args[2]), labels...)
	ts.Check(err)
	ts.Setenv(args[0], strconv.Itoa(n))
}

func issueArg(ts *testscript.TestScript, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		ts.Fatalf("%q is no issue number", s)
	}
	return n
}

func forgeIssueClose(ts *testscript.TestScript, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: forge issue-close N [USER]")
	}
	as := "reviewer"
	if len(args) == 2 {
		as = args[1]
	}
	w := worldOf(ts)
	ts.Check(w.repo.CloseIssue(w.ctx, forgeUser(ts, as), issueArg(ts, args[0])))
}

func forgeIssueComment(ts *testscript.TestScript, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: forge issue-comment N USER TEXT")
	}
	w := worldOf(ts)
	_, err := w.repo.CommentIssue(w.ctx, forgeUser(ts, args[1]), issueArg(ts, args[0]), goUnescape(ts, args[2]))
	ts.Check(err)
}

func forgeIssueUnlabel(ts *testscript.TestScript, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: forge issue-unlabel N LABEL")
	}
	w := worldOf(ts)
	ts.Check(w.repo.RemoveIssueLabel(w.ctx, w.srv.Admin, issueArg(ts, args[0]), args[1]))
}

func issueView(ts *testscript.TestScript, n string) giteatest.IssueView {
	w := worldOf(ts)
	v, err := w.repo.IssueView(w.ctx, issueArg(ts, n))
	ts.Check(err)
	return v
}

func forgeIssueState(ts *testscript.TestScript, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: forge issue-state N open|closed")
	}
	if v := issueView(ts, args[0]); v.State != args[1] {
		ts.Fatalf("issue #%s is %s, want %s", args[0], v.State, args[1])
	}
}

func forgeIssueList(ts *testscript.TestScript, what string, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: forge issue-%s N A,B|-", what)
	}
	v := issueView(ts, args[0])
	got := v.Labels
	if what == "assignees" {
		got = v.Assignees
	}
	var want []string
	if args[1] != "-" {
		want = strings.Split(args[1], ",")
		slices.Sort(want)
	}
	if !slices.Equal(got, want) {
		ts.Fatalf("the %s of issue #%s are %q, want %q", what, args[0], got, want)
	}
}

func forgeWaitIssueLabel(ts *testscript.TestScript, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: forge wait-issue-label N LABEL")
	}
	deadline := time.Now().Add(hangGuard)
	for {
		v := issueView(ts, args[0])
		if slices.Contains(v.Labels, args[1]) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("issue #%s still lacks the label %s after %s (labels %q)", args[0], args[1], hangGuard, v.Labels)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
