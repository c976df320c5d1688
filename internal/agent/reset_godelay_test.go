package agent

import (
	"testing"
	"time"
)

// OpenAI's rate-limit messages give the delay as a Go duration ("Please try
// again in 7m12s."), and copilot passes that message through as its only
// word on when the limit resets (internal/conformance, copilot/ratelimit).
func TestResetTimeGoDuration(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Time
	}{
		{"Rate limit reached for gpt-4o-mini in organization org-x on requests per day (RPD): Limit 200, Used 200, Requested 1. Please try again in 7m12s. Visit https://platform.openai.com/account/rate-limits to learn more.", now.Add(7*time.Minute + 12*time.Second)},
		{"Please try again in 6m0s.", now.Add(6 * time.Minute)},
		{"429 Rate limit reached for fake-model. Please try again in 1h29m34s. Visit", now.Add(time.Hour + 29*time.Minute + 34*time.Second)},
		{"Please try again in 1m26.4s.", now.Add(time.Minute + 26*time.Second)},
	}
	for _, c := range cases {
		if got := resetTime(c.in, now); !got.Equal(c.want) {
			t.Errorf("resetTime(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}
