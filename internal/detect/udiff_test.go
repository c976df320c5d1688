package detect

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// udiff is a unified diff of one file as git writes it (3 lines of
// context), from old to new ("" absent: an added or deleted file); "" when
// they are equal.
func udiff(path, old, new string) string {
	if old == new {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	// lcs[i][j]: the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte
		text string
		ai   int // line of a (from 0) of a ' ' or '-', or where a '+' goes
		bi   int
	}
	var ops []op
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, op{' ', a[i], i, j})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', a[i], i, j})
			i++
		default:
			ops = append(ops, op{'+', b[j], i, j})
			j++
		}
	}
	var out strings.Builder
	from, to := "a/"+path, "b/"+path
	if old == "" {
		from = "/dev/null"
	}
	if new == "" {
		to = "/dev/null"
	}
	fmt.Fprintf(&out, "diff --git a/%s b/%s\n", path, path)
	if old == "" {
		out.WriteString("new file mode 100644\n")
	} else if new == "" {
		out.WriteString("deleted file mode 100644\n")
	}
	fmt.Fprintf(&out, "index 0000000..1111111\n--- %s\n+++ %s\n", from, to)
	const ctx = 3
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		// a hunk: from ctx lines before the change to ctx lines after the
		// last change less than 2*ctx lines after the one before
		start := max(0, k-ctx)
		end := k
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		na, nb := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				na++
			}
			if o.kind != '-' {
				nb++
			}
		}
		sa, sb := ops[start].ai+1, ops[start].bi+1
		if na == 0 {
			sa--
		}
		if nb == 0 {
			sb--
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", sa, na, sb, nb)
		for _, o := range ops[start:end] {
			out.WriteString(string(o.kind) + o.text + "\n")
		}
		k = end
	}
	return out.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// treeDiff is the diff from one tree (path → content) to another.
func treeDiff(from, to map[string]string) string {
	paths := map[string]bool{}
	for p := range from {
		paths[p] = true
	}
	for p := range to {
		paths[p] = true
	}
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		b.WriteString(udiff(p, from[p], to[p]))
	}
	return b.String()
}

// mapTree is a Tree of contents in memory; reads counts the files read.
type mapTree struct {
	files map[string]string
	reads *int
}

func (t mapTree) ReadFiles(_ context.Context, paths []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, p := range paths {
		if c, ok := t.files[p]; ok {
			out[p] = []byte(c)
			if t.reads != nil {
				*t.reads++
			}
		}
	}
	return out, nil
}

// attemptOf is attempt n that took base to files (path → content, ""
// deletes), with its tree when withTree.
func attemptOf(n int, base, files map[string]string, withTree bool) Attempt {
	tree := maps.Clone(base)
	for p, c := range files {
		if c == "" {
			delete(tree, p)
		} else {
			tree[p] = c
		}
	}
	d := treeDiff(base, tree)
	a := Attempt{Number: n, Tier: "t1", Change: d, Diff: d, GateError: fmt.Sprintf("fp%d", n)}
	if withTree {
		a.Tree = mapTree{files: tree}
	}
	return a
}
