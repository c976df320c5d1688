package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
)

// A page's live part is fetched again each time its run moves: for a batch
// of 200 tasks, over 250 KiB, of which a task that moves changes a few
// lines. So the server keeps the versions it sent lately, by the hash of
// their text, and a page that says which one it has (?have=) gets the
// lines that changed (a delta), or nothing when nothing did.

// versionsKept bounds the versions kept (whatever page, whatever client).
const versionsKept = 64

// maxEdits bounds the edits a delta is looked for with: beyond, the
// whole part is sent.
const maxEdits = 400

// versions are the live parts sent lately, by version.
type versions struct {
	mu    sync.Mutex
	text  map[string]string
	order []string
}

// versionOf is the version of a live part: a hash of its text.
func versionOf(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:12])
}

// keep remembers text as version v, forgetting the oldest beyond
// versionsKept.
func (vs *versions) keep(v, text string) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.text == nil {
		vs.text = map[string]string{}
	}
	if _, ok := vs.text[v]; ok {
		return
	}
	vs.text[v] = text
	vs.order = append(vs.order, v)
	if len(vs.order) > versionsKept {
		delete(vs.text, vs.order[0])
		vs.order = vs.order[1:]
	}
}

func (vs *versions) get(v string) (string, bool) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	t, ok := vs.text[v]
	return t, ok
}

// delta is what turns version From into version To: Ops, applied to
// From's lines in order: a positive number keeps that many lines, a
// negative one drops that many, a string inserts its lines.
type delta struct {
	From string `json:"from"`
	To   string `json:"to"`
	Ops  []any  `json:"ops"`
}

// deltaOf is the delta from old to new, by lines; ok is false when they
// differ by more than maxEdits lines (send new whole then).
func deltaOf(old, new string) (ops []any, ok bool) {
	a, b := strings.Split(old, "\n"), strings.Split(new, "\n")
	script, ok := editScript(a, b, maxEdits)
	if !ok {
		return nil, false
	}
	// Runs of the same kind of edit are merged into one op.
	var ins []string
	flush := func() {
		if len(ins) > 0 {
			ops = append(ops, strings.Join(ins, "\n"))
			ins = nil
		}
	}
	add := func(n int) {
		if k := len(ops); k > 0 {
			if last, isNum := ops[k-1].(int); isNum && (last > 0) == (n > 0) {
				ops[k-1] = last + n
				return
			}
		}
		ops = append(ops, n)
	}
	for _, e := range script {
		switch e.kind {
		case keepLine:
			flush()
			add(1)
		case dropLine:
			flush()
			add(-1)
		case addLine:
			ins = append(ins, b[e.at])
		}
	}
	flush()
	return ops, true
}

// deltaJSON is the delta from version from (text old) to version to
// (text new), encoded; ok is false when sending new whole is smaller.
func deltaJSON(from, old, to, new string) ([]byte, bool) {
	ops, ok := deltaOf(old, new)
	if !ok {
		return nil, false
	}
	out, err := json.Marshal(delta{From: from, To: to, Ops: ops})
	if err != nil || len(out) >= len(new) {
		return nil, false
	}
	return out, true
}

type editKind int

const (
	keepLine editKind = iota
	dropLine
	addLine
)

// edit is one step of an edit script: keep or drop a line of a, or add
// line at of b.
type edit struct {
	kind editKind
	at   int
}

// editScript is a shortest edit script from a to b (Myers' algorithm),
// or ok false when it takes more than limit edits.
func editScript(a, b []string, limit int) (script []edit, ok bool) {
	// The lines the two share at their start and end are kept as they are.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	for range pre {
		script = append(script, edit{kind: keepLine})
	}
	mid, ok := myers(a[pre:len(a)-suf], b[pre:len(b)-suf], limit)
	if !ok {
		return nil, false
	}
	for _, e := range mid {
		if e.kind == addLine {
			e.at += pre
		}
		script = append(script, e)
	}
	for range suf {
		script = append(script, edit{kind: keepLine})
	}
	return script, true
}

// myers is the shortest edit script from a to b, found by following the
// furthest reaching paths for each number of edits d (V, one per d, kept to
// walk back).
func myers(a, b []string, limit int) ([]edit, bool) {
	n, m := len(a), len(b)
	max := n + m
	if max == 0 {
		return nil, true
	}
	off := max + 1
	v := make([]int, 2*max+2)
	var trace [][]int
	for d := 0; d <= max; d++ {
		if d > limit {
			return nil, false
		}
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return walkBack(trace, off, n, m, d), true
			}
		}
	}
	return nil, false
}

// walkBack turns the furthest reaching paths of each d into the script.
func walkBack(trace [][]int, off, n, m, d int) []edit {
	var rev []edit
	x, y := n, m
	for ; d > 0; d-- {
		v := trace[d]
		k := x - y
		var pk int
		if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := v[off+pk]
		py := px - pk
		for x > px && y > py {
			rev = append(rev, edit{kind: keepLine})
			x, y = x-1, y-1
		}
		if x == px {
			rev = append(rev, edit{kind: addLine, at: py})
		} else {
			rev = append(rev, edit{kind: dropLine})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		rev = append(rev, edit{kind: keepLine})
		x, y = x-1, y-1
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}
