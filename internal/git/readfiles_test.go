package git

import (
	"testing"
)

func TestReadFiles(t *testing.T) {
	t.Parallel()
	_, r := newRepo(t)
	w := newTask(t, r, "t1")
	write(t, w.Path, "main.go", "package main\n\nfunc main() { println(\"hi\") }\n")
	write(t, w.Path, "greet/data.bin", "\x00\x01\n\x02binary\xff")
	write(t, w.Path, "two words.go", "package main\n")
	snap, err := w.Snapshot(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	write(t, w.Path, "main.go", "changed after the snapshot")
	got, err := w.ReadFiles(ctx, snap, []string{"main.go", "gone.go", "greet/data.bin", "greet", "two words.go", "README.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"main.go":        "package main\n\nfunc main() { println(\"hi\") }\n",
		"greet/data.bin": "\x00\x01\n\x02binary\xff",
		"two words.go":   "package main\n",
		"README.md":      "# demo\n",
	}
	if len(got) != len(want) {
		t.Errorf("read %d files, want %d: %q", len(got), len(want), got)
	}
	for p, c := range want {
		if string(got[p]) != c {
			t.Errorf("%s = %q, want %q", p, got[p], c)
		}
	}
	if _, err := w.ReadFiles(ctx, snap, []string{"a\nb"}); err == nil {
		t.Error("a path with a newline was read")
	}
}
