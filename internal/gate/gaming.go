package gate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jlgcli/jlgcli/internal/plural"
)

// Gaming is what an anti-gaming finding does (TestOptions.Gaming).
type Gaming string

// The anti-gaming modes.
const (
	// GamingRefuse fails the report: status fail, recommendation
	// fix_required, each finding a TestFailures entry.
	GamingRefuse Gaming = "refuse"
	// GamingWarn only warns: status warning (when nothing failed), each
	// finding a Warnings entry.
	GamingWarn Gaming = "warn"
)

// GamingModes are the values of Gaming.
var GamingModes = []Gaming{GamingRefuse, GamingWarn}

// The anti-gaming rules (GamingFinding.Rule).
const (
	// RuleFewerTestsRun: a check ran fewer tests than in the baseline.
	RuleFewerTestsRun = "fewer-tests-run"
	// RuleMoreTestsSkipped: a check skipped more tests than in the baseline.
	RuleMoreTestsSkipped = "more-tests-skipped"
	// RuleDeletedTestFile: the change deletes a test file.
	RuleDeletedTestFile = "deleted-test-file"
	// RuleWeakenedTest: the change removes or alters lines of code of a
	// test file that existed at the task's base (TestOptions.WeakenedTests).
	RuleWeakenedTest = "weakened-test"
	// RuleGitControl: the agent (or a check) changed a file that decides
	// what git executes (the repository's config, its hooks, the
	// worktree's .git file); jlgcli undid it. It refuses the change
	// whatever the anti-gaming mode says (Report.Refuse).
	RuleGitControl = "git-control"
)

// WeakenedTest is a test file of the task's base whose lines of code the
// change removes or alters, as the caller computes it (from git's diff).
type WeakenedTest struct {
	File string
	// Count is the number of lines removed or altered; Lines some of them.
	Count int
	Lines []string
}

// GamingFinding is a sign that the agent made the checks pass by weakening
// the tests rather than by fixing the code, or did what a task may not do
// (RuleGitControl).
type GamingFinding struct {
	Rule  string `json:"rule"`
	Check string `json:"check,omitempty"`
	File  string `json:"file,omitempty"`
	// Baseline and Current are the counts compared (tests run, or skipped).
	Baseline int `json:"baseline,omitempty"`
	Current  int `json:"current,omitempty"`
	// Lines are, for a weakened test, lines it removes or alters.
	Lines   []string `json:"lines,omitempty"`
	Message string   `json:"message"`
}

// ValidGamingMode reports whether mode is one that TestOptions.Gaming
// accepts ("" is GamingRefuse).
func ValidGamingMode(mode Gaming) bool {
	return mode == "" || mode == GamingRefuse || mode == GamingWarn
}

// gamingFindings compares the checks of a report with the baseline's: a
// check (matched by name, the n-th of a name with the n-th) that ran fewer
// tests or skipped more is a finding, as is each deleted test file. Only
// checks whose counts are known in both, that built, and that ran to their
// end are compared: a build failure already fails the report, and a check
// not run says nothing. Each weakened test file is a finding too.
func gamingFindings(base *Report, current []CheckReport, deleted []string, weakened []WeakenedTest) []GamingFinding {
	var out []GamingFinding
	if base != nil {
		byName := map[string][]CheckReport{}
		for _, b := range base.Checks {
			byName[b.Name] = append(byName[b.Name], b)
		}
		seen := map[string]int{}
		for _, c := range current {
			k := seen[c.Name]
			seen[c.Name]++
			bs := byName[c.Name]
			if k >= len(bs) || !comparable(c) || !comparable(bs[k]) {
				continue
			}
			b := bs[k]
			if c.Counts.Run < b.Counts.Run {
				out = append(out, GamingFinding{
					Rule: RuleFewerTestsRun, Check: c.Name, Baseline: b.Counts.Run, Current: c.Counts.Run,
					Message: fmt.Sprintf("check %q ran %d tests before your changes and %d now: tests must not be deleted or disabled to make the checks pass",
						c.Name, b.Counts.Run, c.Counts.Run),
				})
			}
			if c.Counts.Skipped > b.Counts.Skipped {
				out = append(out, GamingFinding{
					Rule: RuleMoreTestsSkipped, Check: c.Name, Baseline: b.Counts.Skipped, Current: c.Counts.Skipped,
					Message: fmt.Sprintf("check %q skipped %d tests before your changes and %d now: tests must not be skipped to make the checks pass",
						c.Name, b.Counts.Skipped, c.Counts.Skipped),
				})
			}
		}
	}
	for _, f := range deleted {
		f = filepath.ToSlash(f)
		out = append(out, GamingFinding{
			Rule: RuleDeletedTestFile, File: f,
			Message: fmt.Sprintf("the test file %s was deleted: fix the code or the test rather than deleting it", f),
		})
	}
	for _, w := range weakened {
		f := filepath.ToSlash(w.File)
		var b strings.Builder
		fmt.Fprintf(&b, "the test file %s existed before the task and the change removes or alters %s of it:", f, plural.N(w.Count, "line"))
		for _, l := range w.Lines {
			b.WriteString("\n    - " + l)
		}
		if n := w.Count - len(w.Lines); n > 0 {
			fmt.Fprintf(&b, "\n    (and %d more)", n)
		}
		b.WriteString("\nrestore them and fix the code: existing tests, their cases and their expected values must not be removed or changed to make the checks pass (add tests freely; a task that is meant to change tests declares it with editTests)")
		out = append(out, GamingFinding{Rule: RuleWeakenedTest, File: f, Current: w.Count, Lines: w.Lines, Message: b.String()})
	}
	return out
}

// comparable: a check whose test counts can be compared.
func comparable(c CheckReport) bool {
	return c.Counts != nil && !c.BuildFailed && !c.TimedOut && !c.Interrupted && c.Error == ""
}

// Refuse adds findings that refuse the change whatever the anti-gaming mode
// says: each is one of Gaming and a TestFailures entry, and the report
// fails (fix_required, unless it already says escalate_tier).
func (r Report) Refuse(findings ...GamingFinding) Report {
	if len(findings) == 0 {
		return r
	}
	r.Gaming = append(slices.Clip(r.Gaming), findings...)
	r.TestFailures = slices.Clip(r.TestFailures)
	for _, g := range findings {
		r.TestFailures = append(r.TestFailures, TestFailure{Test: gamingTest + g.Rule, Error: g.Message, File: g.File, Check: g.Check})
	}
	r.Status = StatusFail
	if r.Recommendation != RecommendEscalateTier {
		r.Recommendation = RecommendFixRequired
	}
	return r
}
