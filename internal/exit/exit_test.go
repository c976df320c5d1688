package exit

import (
	"errors"
	"fmt"
	"testing"
)

func TestTableCodesAndStatusesOnce(t *testing.T) {
	codes, statuses := map[int]bool{}, map[string]bool{}
	for _, row := range Table {
		if codes[row.Code] {
			t.Errorf("code %d has two rows", row.Code)
		}
		codes[row.Code] = true
		for _, s := range row.Statuses {
			if statuses[s] {
				t.Errorf("status %s ends with two codes", s)
			}
			statuses[s] = true
			if OfStatus(s) != row.Code {
				t.Errorf("OfStatus(%s) = %d, want %d", s, OfStatus(s), row.Code)
			}
		}
	}
	if OfStatus("error") != Error || OfStatus("no such status") != Error {
		t.Errorf("a status in no row gives %d, want %d", OfStatus("error"), Error)
	}
}

type landing struct{}

func (landing) Error() string { return "landing left half done" }
func (landing) Hint() string  { return "run jlgcli resume" }

func TestUsageAndHints(t *testing.T) {
	u := Usagef("pass --repo URL", "no origin: %s", "x")
	wrapped := fmt.Errorf("task: %w", u)
	if !IsUsage(wrapped) || IsUsage(errors.New("plain")) || IsUsage(nil) {
		t.Error("IsUsage does not tell a usage error through a wrap")
	}
	if wrapped.Error() != "task: no origin: x" {
		t.Errorf("message %q", wrapped.Error())
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{wrapped, "pass --repo URL"},
		{NewUsage(errors.New("bad"), ""), ""},
		{WithHint(errors.New("no report"), "jlgcli show X"), "jlgcli show X"},
		{fmt.Errorf("resume: %w", landing{}), "run jlgcli resume"},
		// The outermost hint is the one said.
		{WithHint(fmt.Errorf("x: %w", u), "outer"), "outer"},
		{nil, ""},
	} {
		if got := HintOf(tc.err); got != tc.want {
			t.Errorf("HintOf(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	if IsUsage(WithHint(errors.New("no report"), "h")) {
		t.Error("a hint makes no usage error")
	}
}
