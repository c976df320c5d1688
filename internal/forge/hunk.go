package forge

import (
	"fmt"
	"strings"
)

// hunkAround is the hunk of unified diff diff (of several files, as git
// writes them) that holds line of file path — a line of the new side, or
// of the old when old — from its header down to that line, as GitHub's
// diff_hunk is; "" when no hunk holds it.
func hunkAround(diff, path string, line int, old bool) string {
	var (
		inFile   bool
		hunk     []string
		oldN     int
		newN     int
		inHunk   bool
		wantFile = "+++ b/" + path
		wantOld  = "--- a/" + path
	)
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			inFile, inHunk = false, false
			continue
		case strings.HasPrefix(l, "--- "):
			if !inHunk {
				inFile = inFile || (old && l == wantOld)
				continue
			}
		case strings.HasPrefix(l, "+++ "):
			if !inHunk {
				inFile = inFile || l == wantFile
				continue
			}
		}
		if !inFile {
			continue
		}
		if strings.HasPrefix(l, "@@ ") {
			var a, b, c, d int
			if !parseHunkHeader(l, &a, &b, &c, &d) {
				inHunk = false
				continue
			}
			hunk, oldN, newN, inHunk = []string{l}, a, c, true
			continue
		}
		if !inHunk || l == "" || l[0] == '\\' {
			continue
		}
		hunk = append(hunk, l)
		switch l[0] {
		case '+':
			if !old && newN == line {
				return strings.Join(hunk, "\n")
			}
			newN++
		case '-':
			if old && oldN == line {
				return strings.Join(hunk, "\n")
			}
			oldN++
		default:
			if (!old && newN == line) || (old && oldN == line) {
				return strings.Join(hunk, "\n")
			}
			oldN++
			newN++
		}
	}
	return ""
}

// parseHunkHeader reads "@@ -a,b +c,d @@ …" (a count may be left out).
func parseHunkHeader(l string, a, b, c, d *int) bool {
	*b, *d = 1, 1
	fields := strings.Fields(l)
	if len(fields) < 3 {
		return false
	}
	read := func(s string, start, count *int) bool {
		if _, err := fmt.Sscanf(s, "%d,%d", start, count); err == nil {
			return true
		}
		_, err := fmt.Sscanf(s, "%d", start)
		return err == nil
	}
	return strings.HasPrefix(fields[1], "-") && strings.HasPrefix(fields[2], "+") &&
		read(fields[1][1:], a, b) && read(fields[2][1:], c, d)
}
