package forge

import "testing"

const twoFiles = `diff --git a/README.md b/README.md
index 1111111..2222222 100644
--- a/README.md
+++ b/README.md
@@ -1,4 +1,3 @@
 # hello
-old line
 more
 end
diff --git a/greet/greet.go b/greet/greet.go
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/greet/greet.go
@@ -0,0 +1,3 @@
+package greet
+
+func Greet() string { return "helo" }
`

// The hunk around a line of either side, cut at that line, as GitHub's
// diff_hunk is; none for a line or file no hunk holds.
func TestHunkAround(t *testing.T) {
	for _, tc := range []struct {
		path string
		line int
		old  bool
		want string
	}{
		{"greet/greet.go", 3, false, "@@ -0,0 +1,3 @@\n+package greet\n+\n+func Greet() string { return \"helo\" }"},
		{"greet/greet.go", 1, false, "@@ -0,0 +1,3 @@\n+package greet"},
		{"README.md", 2, true, "@@ -1,4 +1,3 @@\n # hello\n-old line"},
		{"README.md", 2, false, "@@ -1,4 +1,3 @@\n # hello\n-old line\n more"},
		{"README.md", 9, false, ""},
		{"other.go", 1, false, ""},
	} {
		if got := hunkAround(twoFiles, tc.path, tc.line, tc.old); got != tc.want {
			t.Errorf("%s:%d old=%v:\n got %q\nwant %q", tc.path, tc.line, tc.old, got, tc.want)
		}
	}
}
