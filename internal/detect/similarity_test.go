package detect

import (
	"strings"
	"testing"
)

// Realistic diffs of attempts at the same task, in pairs.
const (
	// An off-by-one, fixed two different ways.
	offByOneA = `diff --git a/internal/page/page.go b/internal/page/page.go
index 3b18e51..a9c2f04 100644
--- a/internal/page/page.go
+++ b/internal/page/page.go
@@ -41,7 +41,7 @@ func Window(xs []Item, from, size int) []Item {
 	if from < 0 {
 		from = 0
 	}
-	for i := from; i < from+size && i < len(xs); i++ {
+	for i := from; i <= from+size && i < len(xs); i++ {
 		out = append(out, xs[i])
 	}
 	return out
`
	offByOneB = `diff --git a/internal/page/page.go b/internal/page/page.go
index 3b18e51..77d0e3a 100644
--- a/internal/page/page.go
+++ b/internal/page/page.go
@@ -41,7 +41,7 @@ func Window(xs []Item, from, size int) []Item {
 	if from < 0 {
 		from = 0
 	}
-	for i := from; i < from+size && i < len(xs); i++ {
+	for i := from; i < from+size-1 && i < len(xs); i++ {
 		out = append(out, xs[i])
 	}
 	return out
`
	// offByOneA again, elsewhere in the file (other line numbers) and
	// re-indented.
	offByOneAMoved = `diff --git a/internal/page/page.go b/internal/page/page.go
index 3b18e51..c01dbe2 100644
--- a/internal/page/page.go
+++ b/internal/page/page.go
@@ -57,7 +57,7 @@ func Window(xs []Item, from, size int) []Item {
 	if from < 0 {
 		from = 0
 	}
-	for i := from; i < from+size && i < len(xs); i++ {
+	for i := from;   i <= from + size && i < len(xs); i++ {
 		out = append(out, xs[i])
 	}
 	return out
`

	// A new function, then the same with its variables renamed.
	retryA = `diff --git a/client/retry.go b/client/retry.go
new file mode 100644
index 0000000..5d1c2f7
--- /dev/null
+++ b/client/retry.go
@@ -0,0 +1,22 @@
+package client
+
+import (
+	"context"
+	"time"
+)
+
+// Retry calls f until it succeeds or attempts run out.
+func Retry(ctx context.Context, attempts int, f func() error) error {
+	var lastErr error
+	delay := 100 * time.Millisecond
+	for i := 0; i < attempts; i++ {
+		if lastErr = f(); lastErr == nil {
+			return nil
+		}
+		select {
+		case <-ctx.Done():
+			return ctx.Err()
+		case <-time.After(delay):
+		}
+		delay *= 2
+	}
+	return lastErr
+}
`
	retryRenamed = `diff --git a/client/retry.go b/client/retry.go
new file mode 100644
index 0000000..8e0a4b1
--- /dev/null
+++ b/client/retry.go
@@ -0,0 +1,22 @@
+package client
+
+import (
+	"context"
+	"time"
+)
+
+// Retry calls fn until it succeeds or attempts run out.
+func Retry(ctx context.Context, n int, fn func() error) error {
+	var err error
+	backoff := 100 * time.Millisecond
+	for try := 0; try < n; try++ {
+		if err = fn(); err == nil {
+			return nil
+		}
+		select {
+		case <-ctx.Done():
+			return ctx.Err()
+		case <-time.After(backoff):
+		}
+		backoff *= 2
+	}
+	return err
+}
`
	// retryA with a real change: jitter and a cap on the delay.
	retryChanged = `diff --git a/client/retry.go b/client/retry.go
new file mode 100644
index 0000000..1f2e3d4
--- /dev/null
+++ b/client/retry.go
@@ -0,0 +1,27 @@
+package client
+
+import (
+	"context"
+	"math/rand/v2"
+	"time"
+)
+
+// Retry calls f until it succeeds or attempts run out.
+func Retry(ctx context.Context, attempts int, f func() error) error {
+	var lastErr error
+	delay := 100 * time.Millisecond
+	for i := 0; i < attempts; i++ {
+		if lastErr = f(); lastErr == nil {
+			return nil
+		}
+		jitter := time.Duration(rand.Int64N(int64(delay) / 2))
+		select {
+		case <-ctx.Done():
+			return ctx.Err()
+		case <-time.After(delay + jitter):
+		}
+		delay = min(2*delay, 5*time.Second)
+	}
+	return lastErr
+}
`

	// A Python fix, then the same reformatted by black.
	pyA = `diff --git a/app/users.py b/app/users.py
index 1a2b3c4..5d6e7f8 100644
--- a/app/users.py
+++ b/app/users.py
@@ -12,6 +12,9 @@ def load_users(path):
     with open(path) as fh:
         rows = json.load(fh)
-    return [User(r['name'], r['email']) for r in rows]
+    users = [User(r['name'], r['email'].lower(), r.get('role', 'member')) for r in rows if r.get('active', True)]
+    users.sort(key=lambda u: u.name)
+    return users
`
	pyABlack = `diff --git a/app/users.py b/app/users.py
index 1a2b3c4..0a9b8c7 100644
--- a/app/users.py
+++ b/app/users.py
@@ -12,6 +12,14 @@ def load_users(path):
     with open(path) as fh:
         rows = json.load(fh)
-    return [User(r['name'], r['email']) for r in rows]
+    users = [
+        User(r["name"], r["email"].lower(), r.get("role", "member"))
+        for r in rows
+        if r.get("active", True)
+    ]
+    users.sort(key=lambda u: u.name)
+    return users
`
	// pyA with a different idea: inactive users are kept and flagged.
	pyOther = `diff --git a/app/users.py b/app/users.py
index 1a2b3c4..2c3d4e5 100644
--- a/app/users.py
+++ b/app/users.py
@@ -12,6 +12,9 @@ def load_users(path):
     with open(path) as fh:
         rows = json.load(fh)
-    return [User(r['name'], r['email']) for r in rows]
+    users = [User(r['name'], r['email'], active=r.get('active', True)) for r in rows]
+    return sorted(users, key=lambda u: (not u.active, u.name))
`

	// A JavaScript change, then prettier's version of it.
	jsA = `diff --git a/src/api.js b/src/api.js
index 9f8e7d6..6c5b4a3 100644
--- a/src/api.js
+++ b/src/api.js
@@ -3,5 +3,8 @@ import { request } from './http'
 export async function getUser(id) {
-  return request('/users/' + id)
+  const res = await request('/users/' + id, { timeout: 5000 })
+  if (!res.ok) throw new Error('user ' + id + ': ' + res.status)
+  return res.json()
 }
`
	jsAPrettier = `diff --git a/src/api.js b/src/api.js
index 9f8e7d6..1b2c3d4 100644
--- a/src/api.js
+++ b/src/api.js
@@ -3,5 +3,8 @@ import { request } from "./http";
 export async function getUser(id) {
-  return request('/users/' + id)
+  const res = await request("/users/" + id, { timeout: 5000, });
+  if (!res.ok) throw new Error("user " + id + ": " + res.status);
+  return res.json();
 }
`
	// jsA with another timeout and a retry: a small real change.
	jsOther = `diff --git a/src/api.js b/src/api.js
index 9f8e7d6..4e5f6a7 100644
--- a/src/api.js
+++ b/src/api.js
@@ -3,5 +3,8 @@ import { request } from './http'
 export async function getUser(id) {
-  return request('/users/' + id)
+  const res = await request('/users/' + id, { timeout: 30000, retries: 2 })
+  if (!res.ok) return null
+  return res.json()
 }
`

	// A nil check, then a different guard on the same line.
	guardA = `diff --git a/store/cache.go b/store/cache.go
--- a/store/cache.go
+++ b/store/cache.go
@@ -88,6 +88,9 @@ func (c *Cache) Get(key string) (*Entry, bool) {
 	c.mu.Lock()
 	defer c.mu.Unlock()
 	e := c.entries[key]
+	if e == nil {
+		return nil, false
+	}
 	return e, !e.expired(c.now())
 }
`
	guardB = `diff --git a/store/cache.go b/store/cache.go
--- a/store/cache.go
+++ b/store/cache.go
@@ -88,6 +88,9 @@ func (c *Cache) Get(key string) (*Entry, bool) {
 	c.mu.Lock()
 	defer c.mu.Unlock()
-	e := c.entries[key]
+	e, ok := c.entries[key]
+	if !ok {
+		return nil, false
+	}
 	return e, !e.expired(c.now())
 }
`
	// A one-word difference that is a different fix, not a rename.
	returnA = `diff --git a/calc/calc.go b/calc/calc.go
--- a/calc/calc.go
+++ b/calc/calc.go
@@ -10,3 +10,3 @@ func pick(lo, hi, mid int) int {
-	return lo
+	return hi
 }
`
	returnB = `diff --git a/calc/calc.go b/calc/calc.go
--- a/calc/calc.go
+++ b/calc/calc.go
@@ -10,3 +10,3 @@ func pick(lo, hi, mid int) int {
-	return lo
+	return mid
 }
`
)

func TestDiffSimilarity(t *testing.T) {
	for _, c := range []struct {
		name    string
		a, b    string
		similar bool // at or above DefaultSimilarity
	}{
		{"identical", offByOneA, offByOneA, true},
		{"moved and re-spaced", offByOneA, offByOneAMoved, true},
		{"renamed variables", retryA, retryRenamed, true},
		{"black reformatting", pyA, pyABlack, true},
		{"prettier reformatting", jsA, jsAPrettier, true},
		{"off-by-one fixed another way", offByOneA, offByOneB, false},
		{"retry with jitter", retryA, retryChanged, false},
		{"renamed, and jitter", retryRenamed, retryChanged, false},
		{"python other idea", pyA, pyOther, false},
		{"js other timeout", jsA, jsOther, false},
		{"nil check against comma-ok", guardA, guardB, false},
		{"one name, another fix", returnA, returnB, false},
		{"different files", offByOneA, guardA, false},
	} {
		s := DiffSimilarity(c.a, c.b)
		s2 := DiffSimilarity(c.b, c.a)
		t.Logf("%-30s %.3f %.3f", c.name, s, s2)
		if got := s >= DefaultSimilarity; got != c.similar {
			t.Errorf("%s: similarity %.3f, want similar=%v", c.name, s, c.similar)
		}
		if got := s2 >= DefaultSimilarity; got != c.similar {
			t.Errorf("%s (reversed): similarity %.3f, want similar=%v", c.name, s2, c.similar)
		}
		if s < 0 || s > 1 {
			t.Errorf("%s: similarity %v out of [0, 1]", c.name, s)
		}
	}
}

func TestDiffSimilarityNotADiff(t *testing.T) {
	if s := DiffSimilarity("def foo(x): return x + 1", "def foo(x):\n    return x + 1\n"); s != 1 {
		t.Errorf("same code, other layout: %v, want 1", s)
	}
	if s := DiffSimilarity("def foo(x): return x + 1", "def bar(y): raise ValueError(y)"); s >= 0.5 {
		t.Errorf("different code: %v", s)
	}
	h := "--- a/x.go\n+++ b/x.go\n@@ -1,1 +1,1 @@\n-\tif i < len(xs) {\n"
	if s := DiffSimilarity(h+"+\tif i <= len(xs) {\n", h+"+\tif i < len(xs)-1 {\n"); s < 0.6 || s > 0.65 {
		t.Errorf("two fixes of one condition: %v, want 0.62 as documented", s)
	}
	if s := DiffSimilarity("", ""); s != 1 {
		t.Errorf("two empty texts: %v, want 1", s)
	}
	if s := DiffSimilarity("", "x := 1"); s != 0 {
		t.Errorf("empty against text: %v, want 0", s)
	}
}

func TestParseDiff(t *testing.T) {
	d := parseDiff(guardB + offByOneA)
	var tags []string
	for _, s := range d.streams {
		tags = append(tags, s.tag)
	}
	if got, want := strings.Join(tags, " "), "-store/cache.go +store/cache.go -internal/page/page.go +internal/page/page.go"; got != want {
		t.Errorf("streams %q, want %q", got, want)
	}
	if got, want := strings.Join(d.streams[0].toks, " "), "e := c . entries [ key ]"; got != want {
		t.Errorf("removed tokens %q, want %q", got, want)
	}
	changed := d.changed.String()
	for _, s := range []string{"file store/cache.go\n-\te := c.entries[key]\n+\te, ok := c.entries[key]\n", "file internal/page/page.go\n"} {
		if !strings.Contains(changed, s) {
			t.Errorf("changed lines lack %q:\n%s", s, changed)
		}
	}
	for _, s := range []string{"@@", "index ", "c.mu.Lock", "+++", "---"} {
		if strings.Contains(changed, s) {
			t.Errorf("changed lines hold %q:\n%s", s, changed)
		}
	}

	// A removed line that looks like a header ("-- comment" in SQL), and a
	// deleted file.
	sql := "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,1 @@\n--- old comment\n select 1;\ndiff --git a/x.go b/x.go\ndeleted file mode 100644\n--- a/x.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-package x\n"
	d = parseDiff(sql)
	tags = nil
	for _, s := range d.streams {
		tags = append(tags, s.tag+":"+strings.Join(s.toks, " "))
	}
	if got, want := strings.Join(tags, " | "), "-q.sql:-- old comment | -x.go:package x"; got != want {
		t.Errorf("streams %q, want %q", got, want)
	}
}

func TestTokens(t *testing.T) {
	for in, want := range map[string]string{
		`if i <= len(xs) {`:            `if i <= len ( xs ) {`,
		`x := f('a', "b",)`:            `x := f ( "a" "b" )`,
		`don't stop`:                   `don ' t stop`,
		`v := 1.5e3 + 0x1F`:            `v := 1.5e3 + 0x1F`,
		"héllo_wörld2 = `raw`":         "héllo_wörld2 = \"raw\"",
		`a->b; c => d ... e?.f ?? g`:   `a -> b c => d ... e ?. f ?? g`,
		`s := "a \"quoted\" word" + x`: `s := "a \"quoted\" word" + x`,
	} {
		if got := strings.Join(appendTokens(nil, in), " "); got != want {
			t.Errorf("tokens of %q: %q, want %q", in, got, want)
		}
	}
}
