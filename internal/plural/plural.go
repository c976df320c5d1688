// Package plural writes counts with their noun in the right number: "1
// attempt", "2 attempts". Every count that jlgcli prints goes through it, so
// that no message says "1 attempts".
package plural

import "fmt"

// N is n followed by word, with an s added when n is not 1. Pass the
// singular of a noun whose plural is a plain s.
func N(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
