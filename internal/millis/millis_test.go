package millis

import (
	"encoding/json"
	"testing"
	"time"
)

func TestConversions(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want Duration
		back time.Duration
	}{
		{0, 0, 0},
		{1500 * time.Millisecond, 1500, 1500 * time.Millisecond},
		{999 * time.Microsecond, 0, 0},
		{2*time.Second + 999*time.Microsecond, 2000, 2 * time.Second},
		{-1500 * time.Microsecond, -1, -time.Millisecond},
		{30 * time.Minute, 1_800_000, 30 * time.Minute},
	} {
		if got := Of(c.d); got != c.want {
			t.Errorf("Of(%v) = %d, want %d", c.d, got, c.want)
		}
		if got := c.want.Duration(); got != c.back {
			t.Errorf("%d.Duration() = %v, want %v", c.want, got, c.back)
		}
	}
}

// The JSON of a Duration is the integer it always was, and reads back.
func TestJSON(t *testing.T) {
	v := struct {
		DurationMs Duration `json:"durationMs"`
		TimeoutMs  Duration `json:"timeoutMs,omitempty"`
	}{DurationMs: 41250}
	b, err := json.Marshal(v)
	if err != nil || string(b) != `{"durationMs":41250}` {
		t.Fatalf("%s, %v", b, err)
	}
	v.DurationMs = 0
	if err := json.Unmarshal([]byte(`{"durationMs":7,"timeoutMs":1800000}`), &v); err != nil || v.DurationMs != 7 || v.TimeoutMs.Duration() != 30*time.Minute {
		t.Errorf("%+v, %v", v, err)
	}
}
