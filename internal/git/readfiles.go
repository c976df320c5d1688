package git

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// ReadFiles returns the contents of paths in the tree of commit (a snapshot
// of an attempt, say), read with one git call; a path that is not a file
// there (deleted, a directory) is absent from the map. It changes nothing.
func (w *Worktree) ReadFiles(ctx context.Context, commit string, paths []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if len(paths) == 0 {
		return out, nil
	}
	var in strings.Builder
	for _, p := range paths {
		if strings.ContainsAny(p, "\n\r") {
			return nil, fmt.Errorf("git: cannot read the path %q in one batch", p)
		}
		in.WriteString(commit + ":" + p + "\n")
	}
	text, _, err := w.repo().run(ctx, call{args: []string{"cat-file", "--batch"}, stdin: strings.NewReader(in.String())})
	if err != nil {
		return nil, err
	}
	// Each answer is "<oid> <type> <size>\n<content>\n", or
	// "<what was asked> missing\n" (ambiguous, or another message).
	for _, p := range paths {
		nl := strings.IndexByte(text, '\n')
		if nl < 0 {
			return nil, fmt.Errorf("git cat-file --batch: no answer for %s", p)
		}
		header := text[:nl]
		text = text[nl+1:]
		f := strings.Fields(header)
		if len(f) != 3 {
			continue // missing
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || size > len(text) {
			return nil, fmt.Errorf("git cat-file --batch: unreadable answer %q for %s", header, p)
		}
		if f[1] == "blob" {
			out[p] = []byte(text[:size])
		}
		text = strings.TrimPrefix(text[size:], "\n")
	}
	return out, nil
}
