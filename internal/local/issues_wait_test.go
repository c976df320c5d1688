package local

import (
	"testing"
	"time"
)

// TestNextIssueWait: a watch waits poll first and after a batch, then twice
// as long each time nothing new matches, never more than MaxIssueWait.
func TestNextIssueWait(t *testing.T) {
	poll := 20 * time.Second
	var got []time.Duration
	last := time.Duration(0)
	for _, found := range []bool{false, false, false, true, false, false, false, false, false, false} {
		last = NextIssueWait(last, poll, found)
		got = append(got, last)
	}
	want := []time.Duration{20 * time.Second, 40 * time.Second, 80 * time.Second, 20 * time.Second, 40 * time.Second,
		80 * time.Second, 160 * time.Second, MaxIssueWait, MaxIssueWait, MaxIssueWait}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("waits %v, want %v", got, want)
		}
	}
	if w := NextIssueWait(0, 0, false); w != DefaultIssuePoll {
		t.Errorf("no poll: %s, want %s", w, DefaultIssuePoll)
	}
}
