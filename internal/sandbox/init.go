package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
)

// initCommand is the hidden first argument with which jlgcli runs as the
// sandbox's network helper (Init).
const initCommand = "__sandbox-init"

// init makes every program that can confine (jlgcli, and the test binaries
// that run agents through it) the sandbox's helper when it is started as
// one: the sandbox runs the executable that started it (selfPath) with
// initCommand, before anything else of that program runs.
func init() {
	if IsInit(os.Args[1:]) {
		os.Exit(Init(os.Args[1:], os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == probeCommand {
		os.Exit(runProbe(os.Stdin, os.Stdout))
	}
	if len(os.Args) > 1 && os.Args[1] == goCacheCommand {
		os.Exit(serveGoCache(os.Args[2:], os.Stdin, os.Stdout))
	}
}

var errUsage = errors.New("usage: jlgcli " + initCommand + " [--relay ADDR=SOCKET]... -- COMMAND [ARG]...")

// IsInit tells whether args (os.Args[1:]) ask for the helper.
func IsInit(args []string) bool { return len(args) > 0 && args[0] == initCommand }

// Init is jlgcli inside a sandbox, before the confined command: it listens
// on the sandbox's loopback ports given by --relay ADDR=SOCKET and relays
// each connection to its Unix socket (jlgcli's side of the way out), then
// runs the command and exits as it did.
// args are os.Args[1:]; errors go to stderr.
func Init(args []string, stderr io.Writer) int {
	code, err := runInit(args)
	if err != nil {
		fmt.Fprintln(stderr, "jlgcli sandbox:", err)
	}
	return code
}

func runInit(args []string) (int, error) {
	if !IsInit(args) {
		return 2, errUsage
	}
	args = args[1:]
	var relays []relay
	for len(args) > 0 && args[0] != "--" {
		if args[0] != "--relay" || len(args) < 2 {
			return 2, errUsage
		}
		addr, sock, ok := strings.Cut(args[1], "=")
		if !ok {
			return 2, errUsage
		}
		relays = append(relays, relay{addr: addr, socket: sock})
		args = args[2:]
	}
	if len(args) < 2 {
		return 2, errUsage
	}
	argv := args[1:]
	for _, r := range relays {
		ln, err := net.Listen("tcp", r.addr)
		if err != nil {
			return 126, err
		}
		go forward(ln, "unix", r.socket)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// jlgcli signals the confined processes themselves (signalDescendants):
	// the helper outlives them, for the sandbox ends with it.
	// Caught, not ignored: an ignored signal would stay ignored in the
	// command.
	signal.Notify(make(chan os.Signal, 8), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return 127, err
		}
		return 126, err
	}
	err := cmd.Wait()
	if err == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 1, err
}
