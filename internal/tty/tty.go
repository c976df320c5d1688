// Package tty is how jlgcli's text looks on a terminal: the cells a text
// takes (Cells), a text cut to a width with "…" (Fit), words wrapped to a
// width (Wrap), a table fitted to a width by shortening and dropping
// columns (Table), and the colours of status words (Palette), with the one
// decision of whether a stream gets colours at all (ColorOn).
//
// It writes no escape code of its own but the colours (SGR), and makes no
// text safe: its callers give it text already made safe (termsafe), or
// that jlgcli wrote.
package tty

import (
	"strings"
	"unicode"

	"golang.org/x/text/width"
)

// Terminal is what a stream is, as the text written on it is laid out:
// its width in cells and whether it takes colours. The zero value is no
// terminal (a pipe, a file, CI): nothing is fitted, nothing coloured.
type Terminal struct {
	// Width in cells; ≤ 0: not fitted (no terminal).
	Width int
	// Palette colours the status words; its zero value colours none.
	Palette Palette
}

// RuneCells is the number of cells r takes on a terminal: 2 for wide
// characters, 0 for combining marks and zero-width ones, 1 otherwise.
func RuneCells(r rune) int {
	switch {
	case r == 0x200d || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || unicode.Is(unicode.Cf, r) ||
		(r >= 0xfe00 && r <= 0xfe0f):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// Cells is the width of s on a terminal, in cells; s holds no escape code.
func Cells(s string) int {
	n := 0
	for _, r := range s {
		n += RuneCells(r)
	}
	return n
}

// Fit is s cut to n cells, "…" ending it when it was cut; "" when n ≤ 0.
func Fit(s string, n int) string {
	if Cells(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		c := RuneCells(r)
		if used+c > n-1 {
			break
		}
		b.WriteRune(r)
		used += c
	}
	return b.String() + "…"
}

// Wrap is s cut into lines of at most n cells, between words; a word
// longer than a line (a path) is cut after a "/" where it has one, else
// anywhere, never shortened. n ≤ 0: s as it is, on one line.
func Wrap(s string, n int) []string {
	if n <= 0 || Cells(s) <= n {
		return []string{s}
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
		case Cells(line)+1+Cells(word) <= n:
			line += " " + word
			continue
		default:
			lines = append(lines, line)
		}
		for Cells(word) > n {
			head := split(word, n)
			lines = append(lines, head)
			word = word[len(head):]
		}
		line = word
	}
	return append(lines, line)
}

// split is the head of word, at most n cells (n > 0), that ends after its
// last "/" within them, else the most it holds (one rune at least).
func split(word string, n int) string {
	used, end, slash := 0, 0, 0
	for i, r := range word {
		c := RuneCells(r)
		if used+c > n && end > 0 {
			break
		}
		used += c
		end = i + len(string(r))
		if r == '/' {
			slash = end
		}
	}
	if slash > 0 {
		return word[:slash]
	}
	return word[:end]
}
