package sheet

import (
	"bytes"
)

// split cuts a sheet into its front matter and its body. The front matter
// is there only when the first line is "---" (after an optional byte-order
// mark); it ends at the next line that is "---" or "...". fmLine is the
// file line of the front matter's first line; body is what follows the
// closing line, and bodyLine the file line it starts at. A front matter
// that is never closed is an error naming the line that opened it.
func split(file string, data []byte) (fm []byte, fmLine int, body []byte, bodyLine int, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first, rest, _ := cutLine(data)
	if !isFence(first, false) {
		return nil, 0, data, 1, nil
	}
	line := 2
	start := rest
	for off := 0; off < len(rest); line++ {
		l, next, _ := cutLine(rest[off:])
		if isFence(l, true) {
			return start[:off], 2, next, line + 1, nil
		}
		off = len(rest) - len(next)
	}
	return nil, 0, nil, 0, &Error{File: file, Line: 1, Msg: `the front matter opened here is not closed by a "---" line`}
}

// cutLine returns the first line of b without its end of line (\n or
// \r\n), and what follows it.
func cutLine(b []byte) (line, rest []byte, found bool) {
	line, rest, found = bytes.Cut(b, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), rest, found
}

// isFence reports whether line opens ("---") or closes ("---" or "...") a
// front matter; trailing spaces are allowed.
func isFence(line []byte, closing bool) bool {
	l := bytes.TrimRight(line, " \t")
	return string(l) == "---" || closing && string(l) == "..."
}
