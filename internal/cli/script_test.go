package cli_test

// End-to-end tests of the jlgcli binary with testscript: the scripts are in
// testdata/script. TestMain registers two programs that the scripts can run
// with exec and that jlgcli can start as agents: "jlgcli" itself, and
// "fakeagent", an agent whose every call does what one line of the file
// $FAKEAGENT_SCRIPT says (see fakeAgent). Custom script commands (scriptCmds)
// check exact exit codes, JSON fields and leftover processes.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/cli"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// hangGuard bounds every wait of the harness: it stops a stuck test, it does
// not measure speed.
const hangGuard = 60 * time.Second

func TestMain(m *testing.M) {
	// stopGitea stops the Gitea server of the pr_* scripts after the run.
	testscript.Main(stopGitea{m}, map[string]func(){
		"jlgcli":    func() { armLandKill(); os.Exit(cli.Run()) },
		"fakeagent": func() { os.Exit(fakeAgent(os.Args[1:])) },
		"memcheck":  func() { os.Exit(memcheck(os.Args[1:])) },
		"hostile":   func() { os.Exit(hostileAgent()) },
	})
}

func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		Setup:               setupScript,
		Cmds:                scriptCmds,
		Condition:           scriptCondition,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
	})
}

// setupScript isolates a script: its own HOME and XDG_CONFIG_HOME under $WORK,
// and a PATH holding only the registered programs and the system's, with no
// real agent CLI on it.
func setupScript(env *testscript.Env) error {
	fake, err := exec.LookPath("fakeagent")
	if err != nil {
		return fmt.Errorf("fakeagent is not on PATH: %v", err)
	}
	path := filepath.Dir(fake) + string(os.PathListSeparator) + "/usr/bin:/bin"
	for _, b := range agent.Builtins {
		for _, dir := range filepath.SplitList(path) {
			if _, err := os.Stat(filepath.Join(dir, b)); err == nil {
				return fmt.Errorf("%s is installed in %s: the scripts need a PATH without any real agent CLI", b, dir)
			}
		}
	}
	env.Setenv("PATH", path)
	// The forge's scripts make their repository with the script's T.
	env.Values[scriptTB{}] = env.T()
	// TESTBIN holds the registered programs only: a PATH of it alone has
	// no bubblewrap (sandbox_missing.txtar).
	env.Setenv("TESTBIN", filepath.Dir(fake))
	// GO_BIN is where the go command is, for scripts that work on a Go
	// project ("env PATH=$GO_BIN:$PATH").
	if g, err := exec.LookPath("go"); err == nil {
		env.Setenv("GO_BIN", filepath.Dir(g))
	}
	// Under -race every program here is the race-enabled test binary, which
	// by default sleeps a second at exit.
	env.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
	env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, "xdg"))
	env.Setenv("FAKEAGENT_SCRIPT", filepath.Join(env.WorkDir, "agent.script"))
	// Agents run confined wherever the machine can (sandbox auto): the fake
	// agent's records (calls/, the script's count, marks) are in $WORK,
	// outside the agent's working directory, so $WORK is writable to it.
	// The sandbox's own scripts clear it.
	env.Setenv("JLGCLI_SANDBOX_ALLOW_WRITE", env.WorkDir)
	// Confined agents get an allow-list of jlgcli's environment: the test
	// programs' own settings are on it, as a user would put theirs.
	env.Setenv("JLGCLI_SANDBOX_PASS_ENV", "FAKEAGENT_*,HOSTILE*,WORK,CLAUDE_CALLS,STANDIN_*")
	for _, d := range []string{"home", "xdg"} {
		if err := os.MkdirAll(filepath.Join(env.WorkDir, d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// scriptCondition adds the conditions [root], true when the tests run as
// root (a container, CI), [pidslimit], true when the sandbox limits each
// call's processes with a pids cgroup, [forge], true when a Gitea server
// can be started (forge_script_test.go), and [knownbugs], true when
// JLGCLI_TEST_KNOWN_BUGS=1: a script that shows a known bug starts with
//
//	[!knownbugs] skip 'KNOWN BUG: ...'
//
// so that it is skipped, saying why, until the bug is fixed.
func scriptCondition(cond string) (bool, error) {
	if cond == "knownbugs" {
		return os.Getenv("JLGCLI_TEST_KNOWN_BUGS") == "1", nil
	}
	if cond == "root" {
		return os.Geteuid() == 0, nil
	}
	if cond == "sandbox" {
		// CI sets JLGCLI_REQUIRE_SANDBOX=1: there, a machine that cannot
		// confine fails the scripts instead of skipping them.
		_, why := sandbox.Available()
		if why != "" && os.Getenv("JLGCLI_REQUIRE_SANDBOX") == "1" {
			return false, fmt.Errorf("JLGCLI_REQUIRE_SANDBOX=1 but %s", why)
		}
		return why == "", nil
	}
	if cond == "forge" {
		return forgeCondition()
	}
	if cond == "pidslimit" {
		// A process limit the kernel enforces per call (a pids cgroup).
		how, _ := sandbox.LimitsAvailable()
		return strings.Contains(how, "pids"), nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"exitcode":  cmdExitcode,
	"interrupt": cmdInterrupt,
	"noproc":    cmdNoproc,
	"json":      cmdJSON,
	"calls":     cmdCalls,
	"mkfile":    cmdMkfile,
	"grabenv":   cmdGrabenv,
	"waitfile":  cmdWaitfile,
	"listen":    cmdListen,
}

// exitcode [-stdin FILE] N program [args...]
//
// runs program as exec does (its stdout and stderr become the script's) and
// fails unless it exits with status N. -stdin gives it FILE on its standard
// input (the script command stdin does not apply to exitcode).
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	stdin := ""
	for len(args) > 1 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-stdin":
			stdin = args[1]
		default:
			ts.Fatalf("unknown option %s", args[0])
		}
		args = args[2:]
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode [-stdin FILE] N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	cmd := startProgram(ts, stdin, args[1:])
	got := waitProgram(ts, cmd, args[1])
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// memcheckFailed is memcheck's exit status when the memory was over.
const memcheckFailed = 199

// memcheck MiB program [args...] (a program, not a script command) runs
// program with its own standard streams and exits with its status, or with
// memcheckFailed when its peak resident memory (or that of a child it waited
// for) went over MiB, three times as much under the race detector.
//
// It exists because Linux carries a process's peak memory across exec: a
// program started straight from the test binary, which grows as the scripts
// run, reports the test binary's peak. Started from memcheck, a small
// process, it reports its own.
func memcheck(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: memcheck MiB program [args...]")
		return 2
	}
	limit, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "memcheck:", err)
		return 2
	}
	if raceEnabled {
		limit *= 3
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "memcheck:", err)
		return 2
	}
	if kib := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss; kib > limit<<10 {
		fmt.Fprintf(os.Stderr, "memcheck: %s peaked at %d MiB of resident memory, over %d MiB\n", args[1], kib>>10, limit)
		return memcheckFailed
	}
	return cmd.ProcessState.ExitCode()
}

// startProgram starts argv as exec would, in the script's directory and
// environment, its output going to the script's stdout and stderr.
func startProgram(ts *testscript.TestScript, stdin string, argv []string) *exec.Cmd {
	path := argv[0]
	if !strings.Contains(path, "/") {
		path = ""
		for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
			if p := filepath.Join(dir, argv[0]); fileExists(p) {
				path = p
				break
			}
		}
		if path == "" {
			ts.Fatalf("%s not found on the script's PATH", argv[0])
		}
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = scriptEnv(ts)
	cmd.Stdout, cmd.Stderr = ts.Stdout(), ts.Stderr()
	if stdin != "" {
		f, err := os.Open(ts.MkAbs(stdin))
		ts.Check(err)
		ts.Defer(func() { f.Close() })
		cmd.Stdin = f
	}
	ts.Check(cmd.Start())
	return cmd
}

// waitProgram waits for cmd, up to the hang guard, and returns its exit
// status (128+signal when a signal ended it).
func waitProgram(ts *testscript.TestScript, cmd *exec.Cmd, name string) int {
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-time.After(hangGuard):
		_ = cmd.Process.Kill()
		<-waited
		ts.Fatalf("%s did not end: it hangs", name)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	ts.Fatalf("%s: %v", name, err)
	return -1
}

// interrupt [-twice] INT|TERM|KILL FILE N program [args...]
//
// starts program in the background, waits for FILE (relative to the
// script's directory) to exist, sends it SIGNAL (INT or TERM; with -twice,
// a second one shortly after), waits for it and fails unless it exits with
// status N. Its stdout and stderr become the script's.
func cmdInterrupt(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! interrupt")
	}
	twice := len(args) > 0 && args[0] == "-twice"
	if twice {
		args = args[1:]
	}
	if len(args) < 4 {
		ts.Fatalf("usage: interrupt [-twice] INT|TERM FILE N program [args...]")
	}
	sig := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL}[args[0]]
	if sig == 0 {
		ts.Fatalf("unknown signal %q", args[0])
	}
	file := ts.MkAbs(args[1])
	want, err := strconv.Atoi(args[2])
	ts.Check(err)
	cmd := startProgram(ts, "", args[3:])
	deadline := time.Now().Add(hangGuard)
	for !fileExists(file) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			ts.Fatalf("%s never appeared", args[1])
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.Check(cmd.Process.Signal(sig))
	if twice {
		// Let the first signal be handled, so that the second one is the
		// "second signal" and not merged with the first.
		time.Sleep(200 * time.Millisecond)
		_ = cmd.Process.Signal(sig)
	}
	if got := waitProgram(ts, cmd, args[3]); got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[3], got, want)
	}
}

// scriptEnv is the environment that exec gives a program in the script.
func scriptEnv(ts *testscript.TestScript) []string {
	env := []string{"PWD=" + ts.MkAbs(".")}
	for _, k := range []string{"WORK", "PATH", "HOME", "XDG_CONFIG_HOME", "FAKEAGENT_SCRIPT", "TMPDIR", "GORACE", "GOCOVERDIR",
		"JLGCLI_BACKEND", "JLGCLI_MAX_ITERATIONS", "JLGCLI_TIMEOUT", "JLGCLI_COMPLETION", "JLGCLI_NO_PROGRESS_LIMIT", "JLGCLI_SANDBOX", "JLGCLI_SANDBOX_ALLOW_WRITE", "JLGCLI_SANDBOX_PASS_ENV"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	// A script names in PASSENV the other variables it set for the program.
	for _, k := range strings.Fields(ts.Getenv("PASSENV")) {
		env = append(env, k+"="+ts.Getenv(k))
	}
	return env
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// noproc
//
// fails unless no process started by this script is left: no live process
// whose environment holds this script's FAKEAGENT_SCRIPT (jlgcli, the fake
// agent and whatever it started). A SIGKILL takes effect asynchronously, so
// it waits for them to go, up to the hang guard.
func cmdNoproc(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 0 {
		ts.Fatalf("usage: noproc")
	}
	tag := "FAKEAGENT_SCRIPT=" + ts.Getenv("FAKEAGENT_SCRIPT")
	deadline := time.Now().Add(hangGuard)
	for {
		left := processesWithEnv(tag)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL) // started by this test: do not leak them
			}
			ts.Fatalf("processes left behind: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processesWithEnv returns the live processes (not zombies) whose
// environment holds the entry kv, with their command lines.
func processesWithEnv(kv string) map[int]string {
	found := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		environ, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		match := false
		for _, v := range strings.Split(string(environ), "\x00") {
			if v == kv {
				match = true
				break
			}
		}
		if !match {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		found[pid] = strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")
	}
	return found
}

// json CHECK...
//
// checks fields of the JSON document on the last command's stdout. PATH is
// dot-separated, with array indexes from 0 ("transcript.1.prompt"). A CHECK is
//
//	PATH=VALUE    equal: VALUE is JSON, or else a string (status=done)
//	PATH~REGEXP   the field (a string, or else its JSON text) matches
//	PATH<NUMBER   PATH>NUMBER   numeric comparisons
//	PATH:TYPE     string, number, int, bool, array, object, null, rfc3339
//	len(PATH)=N   array, object or string length (len()=N: the document's)
//
// "! json PATH..." checks that each PATH is absent.
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	var doc any
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &doc); err != nil {
		ts.Fatalf("stdout is not one JSON document: %v", err)
	}
	if neg {
		for _, p := range args {
			if _, ok := jsonPath(doc, p); ok {
				ts.Fatalf("%s is present", p)
			}
		}
		return
	}
	re := regexp.MustCompile(`^(len\()?([A-Za-z0-9_.]*)\)?([=~<>:])(.*)$`)
	for _, check := range args {
		m := re.FindStringSubmatch(check)
		if m == nil {
			ts.Fatalf("bad check %q", check)
		}
		isLen, path, op, want := m[1] != "", m[2], m[3], m[4]
		v, ok := jsonPath(doc, path)
		if !ok {
			ts.Fatalf("%s: no such field", path)
		}
		if isLen {
			n := -1
			switch x := v.(type) {
			case []any:
				n = len(x)
			case map[string]any:
				n = len(x)
			case string:
				n = len(x)
			}
			v = float64(n)
		}
		switch op {
		case "=":
			var w any
			if err := json.Unmarshal([]byte(want), &w); err != nil {
				w = want
			}
			if !reflect.DeepEqual(v, w) {
				ts.Fatalf("%s is %s, want %s", check[:len(check)-len(want)-1], jsonText(v), jsonText(w))
			}
		case "~":
			s, isString := v.(string)
			if !isString {
				s = jsonText(v)
			}
			if !regexp.MustCompile(want).MatchString(s) {
				ts.Fatalf("%s is %s, which does not match %q", path, jsonText(v), want)
			}
		case "<", ">":
			n, isNum := v.(float64)
			w, err := strconv.ParseFloat(want, 64)
			ts.Check(err)
			if !isNum || (op == "<" && !(n < w)) || (op == ">" && !(n > w)) {
				ts.Fatalf("%s is %s, want %s %s", path, jsonText(v), op, want)
			}
		case ":":
			if !jsonIsType(v, want) {
				ts.Fatalf("%s is %s, not of type %s", path, jsonText(v), want)
			}
		}
	}
}

func jsonPath(doc any, path string) (any, bool) {
	v := doc
	if path == "" {
		return v, true // the document itself: len()=N
	}
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func jsonIsType(v any, typ string) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "int":
		n, ok := v.(float64)
		return ok && n == float64(int64(n))
	case "bool":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "null":
		return v == nil
	case "rfc3339":
		s, ok := v.(string)
		if !ok {
			return false
		}
		_, err := time.Parse(time.RFC3339, s)
		return err == nil
	}
	panic("unknown type " + typ)
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// calls N
//
// fails unless the fake agent was called exactly N times.
func cmdCalls(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: calls N")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if b, err := os.ReadFile(ts.Getenv("FAKEAGENT_SCRIPT") + ".count"); err == nil {
		got, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if got != want {
		ts.Fatalf("the agent was called %d times, want %d", got, want)
	}
}

// mkfile FILE SIZE
//
// writes SIZE bytes of numbered lines to FILE (SIZE may end in K or M).
func cmdMkfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mkfile FILE SIZE")
	}
	size, err := parseSize(args[1])
	ts.Check(err)
	var b strings.Builder
	for i := 1; b.Len() < size; i++ {
		fmt.Fprintf(&b, "line %07d: the quick brown fox jumps over the lazy dog \"quoted\" \\ back\\slash\n", i)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()[:size]), 0o644))
}

func parseSize(s string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.Atoi(s)
	return n * mult, err
}

// grabenv VAR FILE REGEXP
//
// sets the environment variable VAR of the script to the first submatch of
// REGEXP (or the whole match when it has no group) in FILE: stdout and
// stderr are the last command's output, any other name a file. It fails
// when REGEXP does not match.
func cmdGrabenv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: grabenv VAR FILE REGEXP")
	}
	text := ts.ReadFile(args[1])
	re, err := regexp.Compile(args[2])
	ts.Check(err)
	m := re.FindStringSubmatch(text)
	if m == nil {
		ts.Fatalf("%s does not match %q", args[1], args[2])
	}
	v := m[0]
	if len(m) > 1 {
		v = m[1]
	}
	ts.Setenv(args[0], v)
}

// waitfile FILE
//
// waits for FILE (relative to the script's directory) to exist, up to the
// hang guard.
func cmdWaitfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	file := ts.MkAbs(args[0])
	deadline := time.Now().Add(hangGuard)
	for !fileExists(file) {
		if time.Now().After(deadline) {
			ts.Fatalf("%s never appeared", args[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fakeAgent is an agent CLI whose behaviour each test scripts. Its arguments
// are its own options, then whatever the backend's command adds:
//
//	--prompt=stdin|arg|file   where the prompt is (default stdin; arg and file:
//	                          the last argument is the prompt or its file)
//	--tag=ANYTHING            ignored (tells processes apart)
//
// Call n (counted in $FAKEAGENT_SCRIPT.count) runs line n of
// $FAKEAGENT_SCRIPT, or its last line once they are used up. A line holds
// directives separated by " ;; ":
//
//	reply TEXT        print TEXT and a newline (\n, \t, \r, \\ are escapes)
//	print TEXT        print TEXT without a newline
//	stderr TEXT       print TEXT and a newline on stderr
//	exit N            exit with status N at once
//	signal NAME       kill itself with SIGNAME (TERM, KILL, SEGV)
//	sleep DURATION    sleep, e.g. 60s
//	echo-prompt       print the prompt received
//	args              print the arguments received, one per line
//	env NAME          print NAME=value, or "NAME unset"
//	pwd               print the working directory
//	write FILE TEXT   write TEXT (escapes as reply) to FILE
//	remove FILE       remove FILE, if it exists
//	seen FILE         record FILE's content in N.seen (what the agent found)
//	ignore-term       from now on, note a SIGTERM (in N.term) and go on
//	grandchild [DUR]  start a process that holds stdout open for DUR (300s)
//	flood BYTES [LINE] print BYTES bytes (K and M suffixes) in lines of LINE bytes
//	                  (default 1024; 0: no newline at all)
//	ready             flush stdout and record N.started (see below)
//	noread            (anywhere on the line) do not read stdin
//	step-reply N      json completion driven by the prompt: K is the number of
//	                  the last line "step K" of the prompt (1 without one);
//	                  print "did step K" and {"status":"continue","next":"step
//	                  K+1"}, or for K >= N {"status":"done",...}
//	step-log FILE WORD  flush stdout, then append "WORD K PID" to FILE (K as
//	                  for step-reply), with one write
//
// Each call records, in calls/ beside $FAKEAGENT_SCRIPT: N.prompt (the
// prompt), N.args, N.pid, N.grandchild (its pid), N.term, and N.started when
// the call is under way: at the ready directive, or else before the first
// directive that is not ignore-term.
func fakeAgent(args []string) int {
	if len(args) == 2 && args[0] == "__hold" {
		d, _ := time.ParseDuration(args[1])
		time.Sleep(d)
		return 0
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "fakeagent: "+format+"\n", a...)
		return 99
	}
	script := os.Getenv("FAKEAGENT_SCRIPT")
	if script == "" {
		return fail("FAKEAGENT_SCRIPT is not set")
	}
	mode := "stdin"
	var rest []string
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "--prompt="):
			mode = strings.TrimPrefix(a, "--prompt=")
		case strings.HasPrefix(a, "--tag="):
		default:
			rest = append(rest, a)
		}
	}

	n := 1
	if b, err := os.ReadFile(script + ".count"); err == nil {
		n, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		n++
	}
	if err := os.WriteFile(script+".count", []byte(strconv.Itoa(n)), 0o644); err != nil {
		return fail("%v", err)
	}
	var lines []string
	if b, err := os.ReadFile(script); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
	}
	line := "reply ok"
	if len(lines) > 0 {
		line = lines[min(n, len(lines))-1]
	}
	directives := strings.Split(line, " ;; ")

	var prompt string
	switch mode {
	case "stdin":
		if !strings.Contains(" "+line+" ", " noread ") {
			b, err := readAll(os.Stdin)
			if err != nil {
				return fail("read stdin: %v", err)
			}
			prompt = string(b)
		}
	case "arg", "file":
		if len(rest) == 0 {
			return fail("no prompt argument")
		}
		prompt = rest[len(rest)-1]
		if mode == "file" {
			b, err := os.ReadFile(prompt)
			if err != nil {
				return fail("read the prompt file: %v", err)
			}
			prompt = string(b)
		}
	default:
		return fail("bad --prompt=%s", mode)
	}

	calls := filepath.Join(filepath.Dir(script), "calls")
	if err := os.MkdirAll(calls, 0o755); err != nil {
		return fail("%v", err)
	}
	record := func(ext, s string) {
		if err := os.WriteFile(filepath.Join(calls, fmt.Sprintf("%d.%s", n, ext)), []byte(s), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "fakeagent:", err)
		}
	}
	record("prompt", prompt)
	record("args", strings.Join(args, "\n")+"\n")
	record("pid", strconv.Itoa(os.Getpid()))

	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	defer out.Flush()
	// N.started tells a script that the call is under way: at the ready
	// directive, or else before the first directive but ignore-term (so that
	// a signal sent on seeing it finds SIGTERM noted).
	started := slices.Contains(directives, "ready")
	for _, d := range directives {
		if !started && !strings.HasPrefix(d, "ignore-term") {
			record("started", "")
			started = true
		}
		verb, arg, _ := strings.Cut(strings.TrimLeft(d, " \t"), " ")
		switch verb {
		case "reply":
			fmt.Fprintln(out, unescape(arg))
		case "print":
			fmt.Fprint(out, unescape(arg))
		case "stderr":
			out.Flush()
			fmt.Fprintln(os.Stderr, unescape(arg))
		case "exit":
			out.Flush()
			code, err := strconv.Atoi(arg)
			if err != nil {
				return fail("exit %q", arg)
			}
			return code
		case "signal":
			out.Flush()
			sig := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "SEGV": syscall.SIGSEGV}[arg]
			signal.Reset(sig)
			_ = syscall.Kill(os.Getpid(), sig)
			time.Sleep(hangGuard)
		case "sleep":
			out.Flush()
			dur, err := time.ParseDuration(arg)
			if err != nil {
				return fail("sleep %q", arg)
			}
			time.Sleep(dur)
		case "echo-prompt":
			fmt.Fprint(out, prompt)
			if !strings.HasSuffix(prompt, "\n") {
				fmt.Fprintln(out)
			}
		case "args":
			for _, a := range args {
				fmt.Fprintln(out, a)
			}
		case "env":
			if v, ok := os.LookupEnv(arg); ok {
				fmt.Fprintf(out, "%s=%s\n", arg, v)
			} else {
				fmt.Fprintf(out, "%s unset\n", arg)
			}
		case "pwd":
			wd, _ := os.Getwd()
			fmt.Fprintln(out, wd)
		case "write":
			file, text, _ := strings.Cut(arg, " ")
			if err := os.WriteFile(file, []byte(unescape(text)), 0o644); err != nil {
				return fail("%v", err)
			}
		case "seen":
			b, err := os.ReadFile(arg)
			if err != nil {
				b = []byte("(missing: " + err.Error() + ")")
			}
			record("seen", string(b))
		case "remove":
			if err := os.Remove(arg); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fail("%v", err)
			}
		case "ignore-term":
			// Note each SIGTERM in N.term, and go on.
			terms := make(chan os.Signal, 1)
			signal.Notify(terms, syscall.SIGTERM)
			go func() {
				for range terms {
					record("term", "")
				}
			}()
		case "grandchild":
			out.Flush()
			if arg == "" {
				arg = "300s"
			}
			self, err := os.Executable()
			if err != nil {
				return fail("%v", err)
			}
			c := exec.Command(self, "__hold", arg)
			c.Args[0] = "fakeagent"
			c.Stdout, c.Stderr = os.Stdout, os.Stderr
			if err := c.Start(); err != nil {
				return fail("%v", err)
			}
			record("grandchild", strconv.Itoa(c.Process.Pid))
		case "flood":
			size, lineLen := arg, "1024"
			if a, b, ok := strings.Cut(arg, " "); ok {
				size, lineLen = a, b
			}
			total, err1 := parseSize(size)
			ll, err2 := strconv.Atoi(lineLen)
			if err1 != nil || err2 != nil || ll < 0 {
				return fail("flood %q", arg)
			}
			// Written from one small buffer, so that the agent's own memory
			// stays small whatever it prints.
			x := []byte(strings.Repeat("x", 32<<10))
			for col := 0; total > 0; {
				if ll > 0 && col == ll-1 {
					out.WriteByte('\n')
					total, col = total-1, 0
					continue
				}
				k := min(total, len(x))
				if ll > 0 {
					k = min(k, ll-1-col)
				}
				out.Write(x[:k])
				total, col = total-k, col+k
			}
		case "ready":
			out.Flush()
			record("started", "")
		case "step-reply":
			n, err := strconv.Atoi(arg)
			if err != nil {
				return fail("step-reply %q", arg)
			}
			k := promptStep(prompt)
			fmt.Fprintf(out, "did step %d\n", k)
			if k >= n {
				fmt.Fprintf(out, "{\"status\":\"done\",\"summary\":\"all %d steps done\"}\n", n)
			} else {
				fmt.Fprintf(out, "{\"status\":\"continue\",\"next\":\"step %d\"}\n", k+1)
			}
		case "step-log":
			if err := out.Flush(); err != nil {
				return fail("%v", err)
			}
			file, word, _ := strings.Cut(arg, " ")
			f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				return fail("%v", err)
			}
			_, err = fmt.Fprintf(f, "%s %d %d\n", word, promptStep(prompt), os.Getpid())
			f.Close()
			if err != nil {
				return fail("%v", err)
			}
		case "noread":
		default:
			return fail("unknown directive %q", d)
		}
	}
	if !started {
		record("started", "")
	}
	return 0
}

// stepRE is a step line of a prompt (see step-reply).
var stepRE = regexp.MustCompile(`(?m)^step (\d+)$`)

// promptStep is the number of the last step line of prompt, 1 without one.
func promptStep(prompt string) int {
	m := stepRE.FindAllStringSubmatch(prompt, -1)
	if m == nil {
		return 1
	}
	k, _ := strconv.Atoi(m[len(m)-1][1])
	return k
}

func readAll(f *os.File) ([]byte, error) {
	var b strings.Builder
	_, err := bufio.NewReader(f).WriteTo(&b)
	return []byte(b.String()), err
}

func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case 't':
				b.WriteByte('\t')
				i++
				continue
			case 'r':
				b.WriteByte('\r')
				i++
				continue
			case '\\':
				b.WriteByte('\\')
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
