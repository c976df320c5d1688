package gate

import (
	"fmt"
	"strings"
)

// How a check fared in the baseline (CheckResult.Baseline, set by Judge).
const (
	// BaselinePassed: it passed before the first iteration.
	BaselinePassed = "passed"
	// BaselineSameFailure: it failed before, with the same fingerprint.
	BaselineSameFailure = "same-failure"
	// BaselineOtherFailure: it failed before, but differently.
	BaselineOtherFailure = "other-failure"
	// BaselineMissing: the baseline has no result for it.
	BaselineMissing = "missing"
)

// Verdict is what the gate says of a claim of done.
type Verdict struct {
	// Passed: done may be accepted. Every check ran, and each passed or is
	// Tolerated.
	Passed bool `json:"passed"`
	// Failed are the checks that block done, in order.
	Failed []CheckResult `json:"failed,omitempty"`
	// Tolerated are the checks that failed in the baseline and still fail
	// with the same fingerprint: reported, not blocking.
	Tolerated []CheckResult `json:"tolerated,omitempty"`
	// Interrupted: the run of the checks was cut short, so it proves nothing.
	Interrupted bool `json:"interrupted,omitempty"`
	// HasBaseline: the verdict compared with a baseline.
	HasBaseline bool `json:"hasBaseline,omitempty"`
}

// Judge decides on current, a run of the checks after the agent said done.
// Without a baseline (nil), every failed check blocks. With one, a check
// that failed in the baseline and now fails with the same fingerprint is
// tolerated; one that fails differently, or passed in the baseline, or is
// missing from it, blocks. Checks are matched by name (the n-th check of a
// name with the n-th of that name in the baseline). An interrupted run never
// passes; nor does a nil current (no run of the checks).
func Judge(current, baseline *Result) Verdict {
	v := Verdict{HasBaseline: baseline != nil}
	if current == nil {
		v.Interrupted = true
		return v
	}
	v.Interrupted = current.Interrupted
	base := map[string][]CheckResult{}
	if baseline != nil {
		for _, b := range baseline.Checks {
			base[b.Name] = append(base[b.Name], b)
		}
	}
	seen := map[string]int{}
	for _, c := range current.Checks {
		k := seen[c.Name]
		seen[c.Name]++
		if baseline != nil {
			c.Baseline = BaselineMissing
			if bs := base[c.Name]; k < len(bs) {
				b := bs[k]
				switch {
				case b.Interrupted:
				case b.Passed:
					c.Baseline = BaselinePassed
				case b.Fingerprint != "" && b.Fingerprint == c.Fingerprint:
					c.Baseline = BaselineSameFailure
				default:
					c.Baseline = BaselineOtherFailure
				}
			}
		}
		switch {
		case c.Passed:
		case !c.Interrupted && c.Baseline == BaselineSameFailure:
			v.Tolerated = append(v.Tolerated, c)
		default:
			v.Failed = append(v.Failed, c)
		}
	}
	v.Passed = len(v.Failed) == 0 && !v.Interrupted
	return v
}

// Summary is one line for a result's details: which checks block and why,
// "" when the verdict passed and nothing was tolerated.
func (v Verdict) Summary() string {
	var parts []string
	for _, c := range v.Failed {
		parts = append(parts, fmt.Sprintf("%q %s", c.Name, outcome(c)))
	}
	var s string
	switch {
	case len(parts) > 0:
		s = "the gate failed: " + strings.Join(parts, "; ")
	case v.Interrupted:
		s = "the gate was interrupted before every check had run"
	}
	if n := len(v.Tolerated); n > 0 {
		t := fmt.Sprintf("%d check(s) failing as in the baseline tolerated", n)
		if s == "" {
			return t
		}
		s += " (" + t + ")"
	}
	return s
}

// outcome says how a failed check ended: "exited with status 1", "timed out
// after 10m0s", "could not be started: ...".
func outcome(c CheckResult) string {
	switch {
	case c.Error != "":
		return "could not be started: " + c.Error
	case c.Limit != "":
		return "failed: " + c.Limit
	case c.TimedOut:
		return fmt.Sprintf("timed out after %s and was stopped", c.TimeoutMs.Duration())
	case c.Interrupted:
		return "was interrupted"
	case c.ExitCode > 128:
		return fmt.Sprintf("was killed by signal %d (exit status %d)", c.ExitCode-128, c.ExitCode)
	}
	return fmt.Sprintf("exited with status %d", c.ExitCode)
}

// maxPromptTails bounds the output tails quoted in one FailurePrompt; the
// checks beyond it are named without their output.
const maxPromptTails = 24 << 10

// FailurePrompt is the continuation text for a verdict that did not pass:
// which checks failed, each with its command and the tail of its output, and
// that they must pass before the agent says done. It is "" for a verdict that
// passed. It says nothing of how to signal done: the engine adds its own
// instruction (marker or JSON) around it.
func FailurePrompt(v Verdict) string {
	if v.Passed {
		return ""
	}
	var b strings.Builder
	if len(v.Failed) == 1 {
		b.WriteString("The task is not done yet: a verification check failed. ")
	} else {
		b.WriteString("The task is not done yet: verification checks failed. ")
	}
	b.WriteString("They were run in the working directory after your last reply.\n")
	budget := maxPromptTails
	for _, c := range v.Failed {
		fmt.Fprintf(&b, "\nCheck %q %s.\n", c.Name, outcome(c))
		if c.Command != c.Name {
			fmt.Fprintf(&b, "Command: %s\n", c.Command)
		}
		switch c.Baseline {
		case BaselineOtherFailure:
			b.WriteString("It already failed before you started, but it now fails differently: your changes affected it.\n")
		case BaselinePassed:
			b.WriteString("It passed before you started: your changes broke it.\n")
		}
		if c.OutputTail == "" || c.Error != "" {
			if c.Error == "" && !c.Interrupted {
				b.WriteString("It printed nothing.\n")
			}
			continue
		}
		if len(c.OutputTail) > budget {
			b.WriteString("(Its output is left out here for length; run the command to see it.)\n")
			continue
		}
		budget -= len(c.OutputTail)
		fmt.Fprintf(&b, "The end of its output (%s in all):\n", size(c.OutputBytes))
		fence := codeFence(c.OutputTail)
		b.WriteString(fence + "\n" + c.OutputTail + "\n" + fence + "\n")
	}
	if v.Interrupted {
		b.WriteString("\nThe checks were interrupted before all of them had run.\n")
	}
	b.WriteString("\nFix the causes so that every check passes, run the checks yourself to confirm, and only then say the task is done. " +
		"Do not weaken, skip or delete checks or tests to make them pass.\n")
	if len(v.Tolerated) > 0 {
		names := make([]string, len(v.Tolerated))
		for i, c := range v.Tolerated {
			names[i] = fmt.Sprintf("%q", c.Name)
		}
		fmt.Fprintf(&b, "(Already failing before you started, in the same way, and not blocking: %s.)\n", strings.Join(names, ", "))
	}
	return b.String()
}

// codeFence returns a fence longer than any run of backticks in s.
func codeFence(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
