package config

import (
	"fmt"
	"strings"
	"time"
)

// ParseDuration reads a duration as every flag, variable, key and sheet of
// jlgcli takes it: a Go duration with its unit ("90s", "5m", "1h30m"), or 0.
// A number without a unit is refused, whatever it is given to: 5 would be
// 5 ns to Go, 5 ms to timeoutMs and 5 s to a reader. The error says what to
// write; the caller names the flag or key.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t != "0" && isNumber(t) {
		return 0, fmt.Errorf("%q has no unit; write %ss, %sm or %sh", s, t, t, t)
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 90s, 5m or 1h30m", s)
	}
	return d, nil
}

// isNumber reports whether s is a decimal number: digits with at most one
// point and an optional sign.
func isNumber(s string) bool {
	s = strings.TrimLeft(s, "+-")
	digits, points := 0, 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.':
			points++
		default:
			return false
		}
	}
	return digits > 0 && points <= 1
}
