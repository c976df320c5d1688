//go:build linux

package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() { scriptCmds["tui"] = cmdTui }

// tuiWindows are the tmux windows that tui started, by NAME's path.
var tuiWindows sync.Map

// tuiWindow is a tmux server of its own with one window.
type tuiWindow struct {
	sock, conf, status, dir string
	program                 string
}

// tmux runs tmux on the window's server.
func (w *tuiWindow) tmux(ts *testscript.TestScript, a ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-S", w.sock, "-f", w.conf}, a...)...)
	cmd.Env = scriptEnv(ts)
	cmd.Dir = w.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("tmux %s: %v: %s", strings.Join(a, " "), err, out)
	}
	return string(out), nil
}

// capture writes what the window shows now (the screen, not the
// scrollback) in NAME.screen, the same with colours as escape codes in
// NAME.ansi, and tmux's paste buffers (what OSC 52 would have set) in
// NAME.buffers; it returns the screen.
func (w *tuiWindow) capture(ts *testscript.TestScript, name string) string {
	var screen string
	for file, flags := range map[string][]string{".screen": nil, ".ansi": {"-e"}} {
		out, err := w.tmux(ts, append([]string{"capture-pane", "-p", "-t", "t"}, flags...)...)
		ts.Check(err)
		var kept []string
		for row := range strings.SplitSeq(out, "\n") {
			kept = append(kept, strings.TrimRight(row, " "))
		}
		for len(kept) > 0 && (kept[len(kept)-1] == "" || strings.Contains(kept[len(kept)-1], "Pane is dead")) {
			kept = kept[:len(kept)-1]
		}
		text := strings.Join(kept, "\n") + "\n"
		ts.Check(os.WriteFile(name+file, []byte(text), 0o644))
		if file == ".screen" {
			screen = text
		}
	}
	bufs, err := w.tmux(ts, "list-buffers", "-F", "#{buffer_sample}")
	ts.Check(err)
	ts.Check(os.WriteFile(name+".buffers", []byte(bufs), 0o644))
	return screen
}

// cmdTui drives a full-screen program in a real terminal, a tmux window of
// its own, as a user does:
//
//	tui start [-size COLSxROWS] NAME program [args...]
//	tui wait NAME REGEXP
//	tui keys NAME KEY...
//	tui end NAME
//
// start starts a tmux server of its own (as tmux does: no configuration
// but remain-on-exit, and set-clipboard on: a program that sets the
// clipboard with OSC 52 makes a paste buffer) with one window COLS columns wide and ROWS rows high
// (80x24), the program in it with the script's environment; it does not
// wait. wait waits until a row of the window's screen matches REGEXP, then
// keeps what it shows: NAME.screen (one row a line, without the blank rows
// and spaces that end them), NAME.ansi (with colours and attributes as
// escape codes) and NAME.buffers (tmux's paste buffers, which OSC 52 sets).
// keys sends keys as tmux send-keys names them (Down, Enter, q, C-c). end
// waits for the program to end, fails unless it exited 0 (with !, unless it
// failed), and keeps what the window shows then, as wait does.
func cmdTui(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: tui start|wait|keys|end NAME ...")
	}
	verb, args := args[0], args[1:]
	if verb == "start" {
		tuiStart(ts, args)
		return
	}
	name := ts.MkAbs(args[0])
	v, ok := tuiWindows.Load(name)
	if !ok {
		ts.Fatalf("tui %s %s: no window started by that name", verb, args[0])
	}
	w := v.(*tuiWindow)
	switch verb {
	case "wait":
		if len(args) != 2 {
			ts.Fatalf("usage: tui wait NAME REGEXP")
		}
		re, err := regexp.Compile("(?m)" + args[1])
		ts.Check(err)
		deadline := time.Now().Add(hangGuard)
		for {
			screen := w.capture(ts, name)
			if re.MatchString(screen) {
				ts.Logf("%s shows:\n%s", w.program, screen)
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("%s never showed %q; it shows:\n%s", w.program, args[1], screen)
			}
			time.Sleep(100 * time.Millisecond)
		}
	case "keys":
		_, err := w.tmux(ts, append([]string{"send-keys", "-t", "t"}, args[1:]...)...)
		ts.Check(err)
	case "end":
		deadline := time.Now().Add(hangGuard)
		code := -1
		for code < 0 {
			if b, err := os.ReadFile(w.status); err == nil {
				code, err = strconv.Atoi(strings.TrimSpace(string(b)))
				ts.Check(err)
				break
			}
			if time.Now().After(deadline) {
				ts.Fatalf("%s did not end in its tmux window: it hangs; it shows:\n%s", w.program, w.capture(ts, name))
			}
			time.Sleep(50 * time.Millisecond)
		}
		ts.Logf("%s ended; its window shows:\n%s", w.program, w.capture(ts, name))
		if neg != (code != 0) {
			ts.Fatalf("%s exited with status %d", w.program, code)
		}
	default:
		ts.Fatalf("tui %s: want start, wait, keys or end", verb)
	}
}

func tuiStart(ts *testscript.TestScript, args []string) {
	cols, rows, args := windowSize(ts, "tui start", args)
	if len(args) < 2 {
		ts.Fatalf("usage: tui start [-size COLSxROWS] NAME program [args...]")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		ts.Fatalf("tmux is not installed (apt-get install tmux)")
	}
	name := ts.MkAbs(args[0])
	dir, err := os.MkdirTemp(ts.MkAbs("."), "tui")
	ts.Check(err)
	w := &tuiWindow{sock: filepath.Join(dir, "sock"), conf: filepath.Join(dir, "tmux.conf"), status: filepath.Join(dir, "status"),
		dir: ts.MkAbs("."), program: args[1]}
	ts.Check(os.WriteFile(w.conf, []byte("set -g remain-on-exit on\nset -g status off\nset -g set-clipboard on\n"), 0o644))
	var line []string
	for _, a := range args[1:] {
		line = append(line, shellQuote(a))
	}
	_, err = w.tmux(ts, "new-session", "-d", "-s", "t", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), "-c", w.dir,
		strings.Join(line, " ")+"; echo $? >"+shellQuote(w.status+".tmp")+" && mv "+shellQuote(w.status+".tmp")+" "+shellQuote(w.status))
	ts.Check(err)
	tuiWindows.Store(name, w)
	ts.Defer(func() {
		_, _ = w.tmux(ts, "kill-server")
		tuiWindows.Delete(name)
	})
}
