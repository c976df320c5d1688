package cli_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// hostileAgent is an agent that attacks the machine it runs on: each
// attack named in $HOSTILE (comma-separated) is tried and reported on one
// line, "ATTACK: ok" or "ATTACK: denied (why)"; then it replies DONE.
//
//   - read: read the planted key $HOSTILE_KEY
//   - write: write $HOME/pwned
//   - link: read the key through a symbolic link made in its working
//     directory, and write $HOME/linked through another
//   - port: connect to 127.0.0.1:$HOSTILE_PORT, another local port, and send
//     it the key (or, unreadable, its name)
//   - agent-socket: connect to the user's ssh-agent ($SSH_AUTH_SOCK), a
//     Unix socket, and send it the key
//   - branch: from a task's worktree, write a file in the user's checkout
//     and commit on the user's branch there
//   - work: write work.txt in its working directory (the change a task
//     needs to be done)
//   - kill: SIGKILL the jlgcli processes of this script (same HOME)
func hostileAgent() int {
	for _, a := range strings.Split(os.Getenv("HOSTILE"), ",") {
		var err error
		switch a {
		case "read":
			_, err = os.ReadFile(os.Getenv("HOSTILE_KEY"))
		case "write":
			err = os.WriteFile(filepath.Join(os.Getenv("HOME"), "pwned"), []byte("pwned"), 0o644)
		case "link":
			err = viaLinks()
		case "port":
			err = sendKey("tcp", "127.0.0.1:"+os.Getenv("HOSTILE_PORT"))
		case "agent-socket":
			err = sendKey("unix", os.Getenv("SSH_AUTH_SOCK"))
		case "branch":
			err = moveUserBranch()
		case "work":
			err = os.WriteFile("work.txt", []byte("work\n"), 0o644)
		case "kill":
			err = killJlgcli()
		case "":
			continue
		default:
			err = fmt.Errorf("unknown attack %q", a)
		}
		if err != nil {
			fmt.Printf("%s: denied (%v)\n", a, err)
		} else {
			fmt.Printf("%s: ok\n", a)
		}
	}
	fmt.Println("DONE")
	return 0
}

func viaLinks() error {
	_ = os.Remove("key-link")
	if err := os.Symlink(os.Getenv("HOSTILE_KEY"), "key-link"); err != nil {
		return err
	}
	if _, err := os.ReadFile("key-link"); err != nil {
		return err
	}
	_ = os.Remove("home-link")
	if err := os.Symlink(filepath.Join(os.Getenv("HOME"), "linked"), "home-link"); err != nil {
		return err
	}
	return os.WriteFile("home-link", []byte("linked"), 0o644)
}

func sendKey(network, addr string) error {
	msg, err := os.ReadFile(os.Getenv("HOSTILE_KEY"))
	if err != nil {
		msg = []byte("no key")
	}
	c, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write(msg)
	return err
}

func moveUserBranch() error {
	top, err := exec.Command("git", "rev-parse", "--git-common-dir").Output()
	if err != nil {
		return err
	}
	checkout := filepath.Dir(strings.TrimSpace(string(top)))
	if err := os.WriteFile(filepath.Join(checkout, "pwned.txt"), []byte("pwned"), 0o644); err != nil {
		return err
	}
	out, err := exec.Command("git", "-C", checkout, "-c", "user.name=x", "-c", "user.email=x@example.com",
		"commit", "-q", "--allow-empty", "-m", "pwned").CombinedOutput()
	if err != nil {
		return fmt.Errorf("git commit: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func killJlgcli() error {
	home := []byte("\x00HOME=" + os.Getenv("HOME") + "\x00")
	dirs, _ := os.ReadDir("/proc")
	n := 0
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		args := bytes.Split(cmdline, []byte{0})
		if len(args) < 2 || filepath.Base(string(args[0])) != "jlgcli" || bytes.HasPrefix(args[1], []byte("__")) {
			continue
		}
		environ, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if !bytes.Contains(append([]byte{0}, environ...), home) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("no jlgcli process in sight")
	}
	return nil
}

// cmdListen starts a TCP listener on loopback for the rest of the script
// (with -unix, a Unix socket listener at PATH): its port (its path) goes in
// the variable VAR, and what each connection sends is appended to the file
// FILE.
//
//	listen [-unix PATH] VAR FILE
func cmdListen(ts *testscript.TestScript, neg bool, args []string) {
	network, addr := "tcp", "127.0.0.1:0"
	if len(args) > 1 && args[0] == "-unix" {
		network, addr, args = "unix", ts.MkAbs(args[1]), args[2:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: listen [-unix PATH] VAR FILE")
	}
	ln, err := net.Listen(network, addr)
	ts.Check(err)
	ts.Defer(func() { ln.Close() })
	file := ts.MkAbs(args[1])
	ts.Check(os.WriteFile(file, nil, 0o644))
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetReadDeadline(time.Now().Add(hangGuard))
				var b bytes.Buffer
				_, _ = b.ReadFrom(c)
				f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
				if err == nil {
					_, _ = f.Write(append(b.Bytes(), '\n'))
					f.Close()
				}
			}()
		}
	}()
	if network == "unix" {
		ts.Setenv(args[0], addr)
		return
	}
	ts.Setenv(args[0], strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
}
