package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
)

// scratchDir is where a run of the checks in a worktree keeps its
// by-products (gate.TestOptions.Scratch): a new directory under the
// worktree's .jlgcli, which git leaves out of every tree it measures and
// commits, which the checks may write (it is inside their working
// directory) and which no agent saw before (it is made after the agent's
// call). done removes it.
func scratchDir(dir string) (scratch string, done func()) {
	parent := filepath.Join(dir, ".jlgcli")
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", func() {}
	}
	s, err := os.MkdirTemp(parent, "gate-")
	if err != nil {
		return "", func() {}
	}
	return s, func() { _ = os.RemoveAll(s) }
}

// baseTests is how the tests of the task's base judge change: set aside
// when the task is meant to change its tests; else the base's version of
// each test file the change modifies or deletes, and none of those it adds.
func (t *tester) baseTests(change git.Change) *gate.BaseTests {
	if t.editTests {
		return &gate.BaseTests{SetAside: "the task declares that it changes existing tests (editTests): its own tests judged it"}
	}
	bt := &gate.BaseTests{}
	for _, f := range change.Files {
		if !gate.BaseTestFile(f.Path) {
			continue
		}
		if f.Status == "A" {
			bt.Removed = append(bt.Removed, f.Path)
		} else {
			bt.Laid = append(bt.Laid, f.Path)
		}
	}
	ws, base := t.ws, change.Base
	paths := append(append([]string(nil), bt.Laid...), bt.Removed...)
	bt.Lay = func(ctx context.Context) error { return ws.LayFiles(ctx, base, paths) }
	return bt
}

// putBack makes the worktree's files those of tree again after a run of
// the checks: what the checks wrote (bytecode, caches, reports, a rewritten
// file) and the base's tests laid for their run are no part of the change.
// Ignored files stay. When it cannot, the report fails: the tree is not
// the one that was judged.
func (t *tester) putBack(ctx context.Context, tree string, rep *gate.Report) {
	if t.ws == nil || tree == "" {
		return
	}
	if err := t.ws.Restore(context.WithoutCancel(ctx), tree); err != nil {
		rep.Status, rep.Recommendation = gate.StatusFail, gate.RecommendFixRequired
		rep.RuntimeErrors = append(rep.RuntimeErrors, fmt.Sprintf("jlgcli could not put the tree back as it was before the checks: %v", err))
	}
}

// UncountedWarning is the warning of a baseline whose checks named in
// uncounted counted no test: which rules are off for them.
func UncountedWarning(uncounted []string) string {
	if len(uncounted) == 0 {
		return ""
	}
	q := make([]string, len(uncounted))
	for i, n := range uncounted {
		q[i] = fmt.Sprintf("%q", n)
	}
	return fmt.Sprintf("the tests of %s %s cannot be counted (jlgcli does not know %s output): the anti-gaming rules fewer-tests-run, more-tests-skipped and the test-by-test comparison with the baseline are off for %s; the tests as they stood at the task's base judge %s by %s exit status only",
		pronoun(len(uncounted), "check", "checks"), strings.Join(q, ", "), pronoun(len(uncounted), "its", "their"),
		pronoun(len(uncounted), "it", "them"), pronoun(len(uncounted), "it", "them"), pronoun(len(uncounted), "its", "their"))
}

func pronoun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
