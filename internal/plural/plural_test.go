package plural

import "testing"

func TestN(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 attempts"}, {1, "1 attempt"}, {2, "2 attempts"}, {-1, "-1 attempts"}} {
		if got := N(tc.n, "attempt"); got != tc.want {
			t.Errorf("N(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
