package git

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestErrorClassification: what git printed (real stderr of git 2.39 and
// curl/ssh) says whether another try may pass (ErrTransient) or not, and
// whether a push was refused (ErrPushRejected).
func TestErrorClassification(t *testing.T) {
	lockNote := "\n\nAnother git process seems to be running in this repository, e.g.\nan editor opened by 'git commit'. Please make sure all processes\nare terminated then try again. If it still fails, a git process\nmay have crashed in this repository earlier:\nremove the file manually to continue.\n"
	noAccess := "fatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n"
	cases := []struct {
		name, stderr        string
		timedOut            bool
		transient, rejected bool
	}{
		{"index lock", "fatal: Unable to create '/tmp/r/.git/index.lock': File exists." + lockNote, false, true, false},
		{"ref lock", "fatal: update_ref failed for ref 'refs/heads/main': cannot lock ref 'refs/heads/main': Unable to create '/tmp/r/.git/refs/heads/main.lock': File exists." + lockNote, false, true, false},
		{"fetch ref lock", "error: cannot lock ref 'refs/remotes/origin/main': Unable to create '/w/repos/ab/.git/refs/remotes/origin/main.lock': File exists.\n ! 1c8e5d1..9f0a2b3  main -> origin/main  (unable to update local ref)\n", false, true, false},
		{"ref moved", "error: cannot lock ref 'refs/remotes/origin/main': is at 9f0a2b3 but expected 1c8e5d1\n", false, true, false},
		{"remote ref lock", "remote: error: cannot lock ref 'refs/heads/main': Unable to create '/srv/r.git/refs/heads/main.lock': File exists.\nTo /srv/r.git\n ! [remote rejected] main -> main (failed to update ref)\nerror: failed to push some refs to '/srv/r.git'\n", false, true, false},
		{"config lock", "error: could not lock config file .git/config: File exists\n", false, true, false},
		{"git daemon refused", "fatal: unable to connect to 127.0.0.1:\n127.0.0.1[0: 127.0.0.1]: errno=Connection refused\n\n", false, true, false},
		{"https refused", "fatal: unable to access 'https://127.0.0.1:1/x/': Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server\n", false, true, false},
		{"ssh refused", "ssh: connect to host 127.0.0.1 port 1: Connection refused\n" + noAccess, false, true, false},
		{"no such host", "fatal: unable to access 'https://nosuch.invalid/x/': Could not resolve host: nosuch.invalid\n", false, true, false},
		{"ssh no such host", "ssh: Could not resolve hostname git.internal: Temporary failure in name resolution\n" + noAccess, false, true, false},
		{"hung up", "error: RPC failed; curl 56 GnuTLS recv error (-9): Error decoding the received TLS packet.\nfatal: the remote end hung up unexpectedly\nfatal: early EOF\nfatal: index-pack failed\n", false, true, false},
		{"server error", "fatal: unable to access 'https://git.example.com/r.git/': The requested URL returned error: 503\n", false, true, false},
		{"timeout", "", true, true, false},

		{"not a fast-forward", "To /srv/r.git\n ! [rejected]        main -> main (non-fast-forward)\nerror: failed to push some refs to '/srv/r.git'\nhint: Updates were rejected because the tip of your current branch is behind\n", false, false, true},
		{"remote ref moved under the push", "remote: error: cannot lock ref 'refs/heads/fix-answer': is at f0db723fe20881d0e18d8748fc2056f2f2e95a71 but expected 0ea275933f525052142e688aac61f6b7b31f9b59        \nTo http://127.0.0.1:45343/jlg/r.git\n ! [remote rejected] f0db723fe20881d0e18d8748fc2056f2f2e95a71 -> fix-answer (failed to update ref)\nerror: failed to push some refs to 'http://127.0.0.1:45343/jlg/r.git'\n", false, false, true},
		{"fetch first", "To /srv/r.git\n ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs to '/srv/r.git'\n", false, false, true},
		{"ref in the way", "fatal: cannot lock ref 'refs/heads/a/b': 'refs/heads/a' exists; cannot create 'refs/heads/a/b'\n", false, false, false},
		{"no repository", "fatal: '/nonexistent/x' does not appear to be a git repository\n" + noAccess, false, false, false},
		{"no such path", "fatal: repository '/tmp/nosuch.git' does not exist\n", false, false, false},
		{"key refused", "git@github.com: Permission denied (publickey).\n" + noAccess, false, false, false},
		{"https auth", "remote: Invalid username or password.\nfatal: Authentication failed for 'https://github.com/o/r.git/'\n", false, false, false},
		{"no credentials", "fatal: could not read Username for 'https://github.com': terminal prompts disabled\n", false, false, false},
		{"not found", "remote: Repository not found.\nfatal: repository 'https://github.com/o/nosuch.git/' not found\n", false, false, false},
		{"bad ref", "fatal: couldn't find remote ref refs/heads/nosuch\n", false, false, false},
		{"bad object", "fatal: Not a valid object name x\n", false, false, false},
		{"conflict", "error: could not apply 1c8e5d1... change\nCONFLICT (content): Merge conflict in answer.txt\n", false, false, false},
	}
	for _, c := range cases {
		err := error(&Error{Args: []string{"fetch"}, ExitCode: 128, Stderr: c.stderr, TimedOut: c.timedOut})
		if c.timedOut {
			err.(*Error).Err = errors.New("deadline")
		}
		wrapped := pushError("push to x", err)
		if got := errors.Is(wrapped, ErrTransient); got != c.transient {
			t.Errorf("%s: transient = %v, want %v", c.name, got, c.transient)
		}
		if got := errors.Is(wrapped, ErrPushRejected); got != c.rejected {
			t.Errorf("%s: rejected = %v, want %v", c.name, got, c.rejected)
		}
	}
}

// TestLockedCloneIsTransient: a fetch into a clone whose ref is locked by
// another git (its .lock file present) fails as transient; once the lock
// is gone, the same fetch passes.
func TestLockedCloneIsTransient(t *testing.T) {
	remote, _ := newRepo(t)
	c, err := OpenClone(ctx, filepath.Join(t.TempDir(), "clone"), remote)
	if err != nil {
		t.Fatal(err)
	}
	branch := tgit(t, remote, "branch", "--show-current")
	write(t, remote, "README.md", "# moved\n")
	tgit(t, remote, "commit", "-q", "-am", "moved")
	lock := filepath.Join(c.Dir, ".git", "refs", "remotes", "origin", branch+".lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	spec := "+refs/heads/" + branch + ":refs/remotes/origin/" + branch
	if err := c.Fetch(ctx, spec); !errors.Is(err, ErrTransient) {
		t.Fatalf("fetch into a locked ref: %v, want ErrTransient", err)
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := c.Fetch(ctx, spec); err != nil {
		t.Fatalf("fetch once the lock is gone: %v", err)
	}
	if _, err := OpenClone(ctx, filepath.Join(t.TempDir(), "other"), filepath.Join(t.TempDir(), "nosuch.git")); err == nil || errors.Is(err, ErrTransient) {
		t.Errorf("clone of no repository: %v, want a final error", err)
	}
}
