package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/termsafe"
)

// A report of a task whose agent, checks and sheet wrote escape codes is
// safe to print on a terminal in every format: Markdown and HTML show
// them (\x1b, \u202e), JSON escapes them with its values unchanged.
func TestReportsSafeForATerminal(t *testing.T) {
	res := failedResult()
	evil := "\x1b]52;c;ZWNobyBwd25lZAo=\x07\x1b]0;title\x07ok\r\x1b[2K\u202eexe\u009b\xff"
	res.Task = evil
	res.Details = evil
	res.Tiers[1].Name = evil
	res.Detections[0].Details = evil
	res.Attempts[3].Change.Diff = "+" + evil + "\n"
	res.Attempts[3].Gate.Checks = []gate.CheckReport{{CheckResult: gate.CheckResult{Name: "go test", OutputTail: evil}}}
	r := New(res)
	for format, out := range map[string]string{"md": r.Markdown(), "html": r.HTML()} {
		if !termsafe.Safe(out) {
			t.Errorf("%s: not safe for a terminal", format)
		}
		if !strings.Contains(out, `\x1b]52;c;ZWNobyBwd25lZAo=`) || !strings.Contains(out, `\u202eexe\u009b\xff`) {
			t.Errorf("%s: the escapes are not shown", format)
		}
	}
	data, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !termsafe.Safe(string(data)) || !strings.Contains(string(data), `\u001b]52;c;`) || !strings.Contains(string(data), `\u202eexe\u009b`) {
		t.Errorf("JSON: %s", data)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil || back.Details != strings.ToValidUTF8(evil, "\ufffd") {
		t.Errorf("JSON read back: %q, %v", back.Details, err)
	}
	b := batch.Summary{RunID: "b", Status: "failed", Tasks: []batch.TaskSummary{{ID: "a" + evil, Status: "failed", Title: evil, Details: evil}}}
	for format, out := range map[string]string{"md": BatchMarkdown(b), "html": BatchHTML(b)} {
		if !termsafe.Safe(out) || !strings.Contains(out, `\x1b]0;title\a`) {
			t.Errorf("batch %s: not safe for a terminal, or the escapes not shown", format)
		}
	}
	s := Summary{Runs: 1, Tiers: []TierFigures{{Name: "fast\x1b[8m", Tasks: 1}}}
	if out := s.Text(); !termsafe.Safe(out) || !strings.Contains(out, `fast\x1b[8m`) {
		t.Errorf("stats: %q", out)
	}
}
