package git

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDiffSeesASameSizeRewriteOfTheSameSecond: a file rewritten with as
// many bytes in the second its stat was cached in the index, then measured
// later: Diff's copy of the index keeps the index's time, so git still
// reads the file (racy git) and sees the change. A copy stamped with the
// time it was made hid it, and a fast agent's change was measured empty.
func TestDiffSeesASameSizeRewriteOfTheSameSecond(t *testing.T) {
	t.Parallel()
	_, r := newRepo(t)
	w := newTask(t, r, "racy")
	for try := 0; ; try++ {
		write(t, w.Path, "answer.txt", "41\n")
		tgit(t, w.Path, "add", "answer.txt")
		tgit(t, w.Path, "commit", "-q", "-m", "41")
		start := time.Now().Unix()
		tgit(t, w.Path, "update-index", "--refresh")
		write(t, w.Path, "answer.txt", "42\n")
		fi, err := os.Stat(filepath.Join(w.Path, "answer.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if fi.ModTime().Unix() == start && time.Now().Unix() == start {
			break // the index and the rewrite in one second
		}
		if try == 5 {
			t.Skip("could not write the index and the file in one second")
		}
	}
	time.Sleep(1100 * time.Millisecond)
	c, err := w.DiffFrom(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if c.Empty || len(c.Files) != 1 || c.Files[0].Path != "answer.txt" {
		t.Errorf("the rewrite was not seen: %+v", c.Files)
	}
}
