//go:build linux

package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() { scriptCmds["tmux"] = cmdTmux }

// cmdTmux runs a program in a real terminal, a tmux window of its own, and
// keeps what the window shows:
//
//	[!] tmux [-size COLSxROWS] NAME program [args...]
//
// starts a tmux server of its own (its socket in the script's directory, no
// configuration but remain-on-exit) with one window COLS columns wide and
// ROWS rows high (80x24), the program in it with the script's environment
// (scriptEnv) and TERM as tmux sets it; waits for it to end, and fails
// unless it exits 0 (with !, unless it fails). What the window shows,
// scrollback included, goes in NAME.screen, one row a line, without the
// blank rows and spaces that end it (a line the program wrote wider than
// the window is on two rows or more there); the same with the colours and
// attributes as escape codes in NAME.ansi.
// windowSize reads the -size COLSxROWS that may start args (80x24 when
// not) of the script command cmd, and returns the args after it.
func windowSize(ts *testscript.TestScript, cmd string, args []string) (cols, rows int, rest []string) {
	cols, rows = 80, 24
	if len(args) > 1 && args[0] == "-size" {
		c, r, ok := strings.Cut(args[1], "x")
		var err1, err2 error
		cols, err1 = strconv.Atoi(c)
		rows, err2 = strconv.Atoi(r)
		if !ok || err1 != nil || err2 != nil {
			ts.Fatalf("%s: -size %q: want COLSxROWS", cmd, args[1])
		}
		args = args[2:]
	}
	return cols, rows, args
}

func cmdTmux(ts *testscript.TestScript, neg bool, args []string) {
	cols, rows, args := windowSize(ts, "tmux", args)
	if len(args) < 2 {
		ts.Fatalf("usage: tmux [-size COLSxROWS] NAME program [args...]")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		ts.Fatalf("tmux is not installed (apt-get install tmux)")
	}
	name := ts.MkAbs(args[0])
	dir, err := os.MkdirTemp(ts.MkAbs("."), "tmux")
	ts.Check(err)
	sock, conf := filepath.Join(dir, "sock"), filepath.Join(dir, "tmux.conf")
	ts.Check(os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g history-limit 10000\nset -g status off\n"), 0o644))
	tmux := func(a ...string) (string, error) {
		cmd := exec.Command("tmux", append([]string{"-S", sock, "-f", conf}, a...)...)
		cmd.Env = scriptEnv(ts)
		cmd.Dir = ts.MkAbs(".")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("tmux %s: %v: %s", strings.Join(a, " "), err, out)
		}
		return string(out), nil
	}
	// The program is run by the shell, in the script's directory, which
	// then writes its exit status in a file: tmux says when a pane is dead,
	// not always how its program ended.
	var line []string
	for _, a := range args[1:] {
		line = append(line, shellQuote(a))
	}
	status := filepath.Join(dir, "status")
	_, err = tmux("new-session", "-d", "-s", "t", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows),
		"-c", ts.MkAbs("."), strings.Join(line, " ")+"; echo $? >"+shellQuote(status+".tmp")+" && mv "+shellQuote(status+".tmp")+" "+shellQuote(status))
	ts.Check(err)
	defer func() { _, _ = tmux("kill-server") }()
	deadline := time.Now().Add(hangGuard)
	code := -1
	for code < 0 {
		if b, err := os.ReadFile(status); err == nil {
			code, err = strconv.Atoi(strings.TrimSpace(string(b)))
			ts.Check(err)
			break
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not end in its tmux window: it hangs", args[1])
		}
		time.Sleep(50 * time.Millisecond)
	}
	for file, flags := range map[string][]string{".screen": nil, ".ansi": {"-e"}} {
		out, err := tmux(append([]string{"capture-pane", "-p", "-t", "t", "-S", "-", "-E", "-"}, flags...)...)
		ts.Check(err)
		var kept []string
		for row := range strings.SplitSeq(out, "\n") {
			kept = append(kept, strings.TrimRight(row, " "))
		}
		// remain-on-exit's own last row ("Pane is dead…") is not the
		// program's.
		for len(kept) > 0 && (kept[len(kept)-1] == "" || strings.Contains(kept[len(kept)-1], "Pane is dead")) {
			kept = kept[:len(kept)-1]
		}
		ts.Check(os.WriteFile(name+file, []byte(strings.Join(kept, "\n")+"\n"), 0o644))
		if file == ".screen" {
			ts.Logf("%s in a tmux window of %dx%d shows:\n%s", args[1], cols, rows, strings.Join(kept, "\n"))
		}
	}
	if neg != (code != 0) {
		ts.Fatalf("%s exited with status %d", args[1], code)
	}
}
