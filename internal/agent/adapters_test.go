package agent

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/jlgcli/jlgcli/internal/proc"
)

var update = flag.Bool("update", false, "write the missing .want.json files of testdata from the parsers' output (never overwrites one: review what it writes)")

// testNow is the classification clock of the tests: relative reset times
// ("try again in 20s", "try again at 5:17 AM") in samples without a time
// stamp count from it. It is just after the samples were recorded.
var testNow = time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)

func fixClock(t *testing.T) {
	t.Helper()
	old := timeNow
	timeNow = func() time.Time { return testNow }
	t.Cleanup(func() { timeNow = old })
}

// streamWant is the expected outcome of one recorded call
// (testdata/<backend>/<case>.want.json).
type streamWant struct {
	Text         string  `json:"text"`
	SessionID    string  `json:"sessionId"`
	InputTokens  int64   `json:"inputTokens"`
	OutputTokens int64   `json:"outputTokens"`
	CostUSD      float64 `json:"costUsd"`
	CostKnown    bool    `json:"costKnown"`
	FailureKind  string  `json:"failureKind"`
	HTTPStatus   int     `json:"httpStatus"`
	ResetAt      string  `json:"resetAt"` // RFC 3339, UTC; "" for none
	// Windows are the subscription windows reported: "kind used% resetsAt".
	Windows []string `json:"windows,omitempty"`
}

func wantOf(r Response) streamWant {
	w := streamWant{
		Text:         r.Text,
		SessionID:    r.SessionID,
		InputTokens:  r.Usage.InputTokens,
		OutputTokens: r.Usage.OutputTokens,
		CostUSD:      r.Usage.CostUSD,
		CostKnown:    r.Usage.CostKnown,
	}
	for _, win := range r.Windows {
		w.Windows = append(w.Windows, fmt.Sprintf("%s %g%% %s %s", win.Kind, win.Used*100, win.ResetsAt.UTC().Format(time.RFC3339), win.Status))
	}
	if f := r.Failure; f != nil {
		w.FailureKind = string(f.Kind)
		w.HTTPStatus = f.HTTPStatus
		if !f.ResetAt.IsZero() {
			w.ResetAt = f.ResetAt.UTC().Format(time.RFC3339)
		}
	}
	return w
}

// parseStream feeds a recorded standard output to a parser the way runParsed
// does, then finishes it.
func parseStream(p streamParser, stdout []byte, end callEnd) Response {
	lines := &proc.Lines{Max: lineMax, Fn: p.Line}
	lines.Write(stdout)
	lines.Flush()
	return p.Finish(end)
}

// readCase reads testdata/<backend>/<name>.{stdout,stderr,exit}.
func readCase(t *testing.T, dir, name string) ([]byte, callEnd) {
	t.Helper()
	base := filepath.Join(dir, name)
	stdout, err := os.ReadFile(base + ".stdout")
	if err != nil {
		t.Fatal(err)
	}
	var end callEnd
	if b, err := os.ReadFile(base + ".stderr"); err == nil {
		end.Stderr = string(b)
	}
	if b, err := os.ReadFile(base + ".exit"); err == nil {
		end.ExitCode, err = strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("%s.exit: %v", base, err)
		}
	}
	return stdout, end
}

// wantFile is the expectation of the sample whose standard output is
// <dir>/<name>.stdout: <name>.want.json; for a recording rec-<case>.stdout,
// whose rec-* files are overwritten when re-recorded, <case>.want.json.
func wantFile(dir, name string) string {
	if c, ok := strings.CutPrefix(name, "rec-"); ok {
		if _, err := os.Stat(filepath.Join(dir, name+".want.json")); err != nil {
			return filepath.Join(dir, c+".want.json")
		}
	}
	return filepath.Join(dir, name+".want.json")
}

// sample finds the standard output of case c of a backend: <c>.stdout or
// the recording rec-<c>.stdout.
func sample(backend, c string) (dir, name string, ok bool) {
	dir = filepath.Join("testdata", backend)
	for _, name := range []string{c, "rec-" + c} {
		if _, err := os.Stat(filepath.Join(dir, name+".stdout")); err == nil {
			return dir, name, true
		}
	}
	return dir, "", false
}

// resetAtWithin compares reset times within a few seconds: a delay the CLI
// gives ("retry after 5354s") is counted from a time stamp with a fraction
// of a second, or from the second of a Date header.
var resetAtWithin = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ResetAt" },
	cmp.Comparer(func(a, b string) bool {
		if a == "" || b == "" {
			return a == b
		}
		ta, errA := time.Parse(time.RFC3339, a)
		tb, errB := time.Parse(time.RFC3339, b)
		if errA != nil || errB != nil {
			return a == b
		}
		d := ta.Sub(tb)
		return d > -5*time.Second && d < 5*time.Second
	}))

// TestRecordedStreams runs every recorded (or hand-written) output under
// testdata/<backend>/ through the backend's parser and compares the outcome
// with its want.json (see wantFile). New samples need no code: drop the
// files in.
func TestRecordedStreams(t *testing.T) {
	fixClock(t)
	dirs, err := filepath.Glob(filepath.Join("testdata", "*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		backend := filepath.Base(dir)
		spec, ok := builtinSpec(backend)
		if !ok {
			t.Errorf("testdata/%s: no such backend", backend)
			continue
		}
		outs, _ := filepath.Glob(filepath.Join(dir, "*.stdout"))
		for _, out := range outs {
			name := strings.TrimSuffix(filepath.Base(out), ".stdout")
			n++
			if c, ok := strings.CutPrefix(name, "rec-"); ok {
				if _, err := os.Stat(filepath.Join(dir, c+".stdout")); err == nil {
					t.Errorf("%s: both %s.stdout and %s.stdout would use %s.want.json", dir, c, name, c)
				}
			}
			t.Run(backend+"/"+name, func(t *testing.T) {
				stdout, end := readCase(t, dir, name)
				r := parseStream(spec.newParser(), stdout, end)
				got := wantOf(r)
				wantFile := wantFile(dir, name)
				if _, err := os.Stat(wantFile); err != nil && *update {
					b, _ := json.MarshalIndent(got, "", "  ")
					if err := os.WriteFile(wantFile, append(b, '\n'), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				b, err := os.ReadFile(wantFile)
				if err != nil {
					t.Fatal(err)
				}
				var want streamWant
				dec := json.NewDecoder(strings.NewReader(string(b)))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&want); err != nil {
					t.Fatalf("%s: %v", wantFile, err)
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9), resetAtWithin); diff != "" {
					t.Errorf("outcome mismatch (-want +got):\n%s", diff)
				}
				if f := r.Failure; f != nil {
					if f.Message == "" || strings.Contains(f.Message, "\n") {
						t.Errorf("failure message %q: want one non-empty line", f.Message)
					}
				}
			})
		}
	}
	if n == 0 {
		t.Fatal("no recorded streams under testdata")
	}
}

// TestRecordedStreamsCoverage makes sure every built-in backend keeps samples
// of each outcome the engine acts on.
func TestRecordedStreamsCoverage(t *testing.T) {
	for _, backend := range Builtins {
		for _, c := range []string{"text", "write", "auth", "ratelimit", "server-error", "unknown-events"} {
			dir, name, ok := sample(backend, c)
			if !ok {
				t.Errorf("%s: no sample %s(.stdout) or rec-%s", dir, c, c)
				continue
			}
			if _, err := os.Stat(wantFile(dir, name)); err != nil {
				t.Errorf("%s/%s: %v", dir, name, err)
			}
		}
	}
}

// TestRecordedStreamsChunked feeds each sample in small pieces, as a pipe
// delivers it, and expects the same outcome as in one piece.
func TestRecordedStreamsChunked(t *testing.T) {
	fixClock(t)
	outs, _ := filepath.Glob(filepath.Join("testdata", "*", "*.stdout"))
	for _, out := range outs {
		dir, name := filepath.Dir(out), strings.TrimSuffix(filepath.Base(out), ".stdout")
		spec, ok := builtinSpec(filepath.Base(dir))
		if !ok {
			continue
		}
		stdout, end := readCase(t, dir, name)
		whole := parseStream(spec.newParser(), stdout, end)
		p := spec.newParser()
		lines := &proc.Lines{Max: lineMax, Fn: p.Line}
		for b := stdout; len(b) > 0; {
			k := min(len(b), 7)
			lines.Write(b[:k])
			b = b[k:]
		}
		lines.Flush()
		if diff := cmp.Diff(whole, p.Finish(end)); diff != "" {
			t.Errorf("%s: chunked outcome differs (-whole +chunked):\n%s", out, diff)
		}
	}
}

func TestLongLineIsTruncatedReply(t *testing.T) {
	// A reply event longer than the line bound is cut: the reply is marked
	// truncated rather than lost or taken for complete.
	long := strings.Repeat("x", 64)
	cases := map[string]string{
		"codex":    `{"type":"item.completed","item":{"type":"agent_message","text":"` + long + `"}}`,
		"copilot":  `{"type":"assistant.message","data":{"content":"` + long + `"}}`,
		"gemini":   `{"type":"message","role":"assistant","content":"` + long + `","delta":true}`,
		"opencode": `{"type":"text","part":{"type":"text","text":"` + long + `"}}`,
		"kilo":     `{"type":"text","part":{"type":"text","text":"` + long + `"}}`,
		"qwen":     `{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"` + long + `"}]}}`,
	}
	for backend, line := range cases {
		spec, _ := builtinSpec(backend)
		p := spec.newParser()
		p.Line([]byte(line), true)
		if r := p.Finish(callEnd{Stopped: true}); !r.Truncated {
			t.Errorf("%s: a cut reply line gave Truncated=false", backend)
		}
	}
}

// TestBuild checks each backend's command line: options, model, session,
// and that the prompt, however long, goes to standard input.
func TestBuild(t *testing.T) {
	long := strings.Repeat("p", PromptArgMax+1024)
	cases := []struct {
		backend string
		req     Request
		args    []string
		env     []string
	}{
		{"claude", Request{Prompt: "hi"}, []string{"-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"}, nil},
		{"claude", Request{Prompt: long, Model: "opus", SessionID: "s1"}, []string{"-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "--model", "opus", "--resume", "s1"}, nil},
		{"codex", Request{Prompt: "hi"}, []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-"}, nil},
		{"codex", Request{Prompt: long, Model: "gpt-5.5", SessionID: "0199a213-81c0-7800-8aa1-bbab2a035a53"}, []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-m", "gpt-5.5", "resume", "0199a213-81c0-7800-8aa1-bbab2a035a53", "-"}, nil},
		{"copilot", Request{Prompt: "hi"}, []string{"-s", "--allow-all-tools", "--output-format", "json"}, nil},
		{"copilot", Request{Prompt: long, Model: "gpt-5.4", SessionID: "d6fcecbb"}, []string{"-s", "--allow-all-tools", "--output-format", "json", "--model", "gpt-5.4", "--resume=d6fcecbb"}, nil},
		{"gemini", Request{Prompt: "hi"}, []string{"--output-format", "stream-json", "--approval-mode", "yolo"}, []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}},
		{"gemini", Request{Prompt: long, Model: "gemini-2.5-pro", SessionID: "349b1eaa"}, []string{"--output-format", "stream-json", "--approval-mode", "yolo", "-m", "gemini-2.5-pro", "--resume", "349b1eaa"}, []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}},
		{"opencode", Request{Prompt: "hi"}, []string{"run", "--format", "json"}, nil},
		{"opencode", Request{Prompt: long, Model: "anthropic/claude-sonnet-4-5", SessionID: "ses_1"}, []string{"run", "--format", "json", "-m", "anthropic/claude-sonnet-4-5", "--session", "ses_1"}, nil},
		{"qwen", Request{Prompt: "hi"}, []string{"--output-format", "stream-json", "--approval-mode", "yolo"}, []string{"QWEN_CODE_SUPPRESS_YOLO_WARNING=1"}},
		{"qwen", Request{Prompt: long, Model: "qwen3-coder-plus", SessionID: "8f6ee0d2"}, []string{"--output-format", "stream-json", "--approval-mode", "yolo", "-m", "qwen3-coder-plus", "--resume", "8f6ee0d2"}, []string{"QWEN_CODE_SUPPRESS_YOLO_WARNING=1"}},
		{"kilo", Request{Prompt: "hi"}, []string{"run", "--format", "json", "--auto"}, nil},
		{"kilo", Request{Prompt: long, Model: "kilo/anthropic/claude-sonnet-4.5", SessionID: "ses_1"}, []string{"run", "--format", "json", "--auto", "-m", "kilo/anthropic/claude-sonnet-4.5", "--session", "ses_1"}, nil},
	}
	for _, c := range cases {
		spec, ok := builtinSpec(c.backend)
		if !ok {
			t.Fatalf("no backend %s", c.backend)
		}
		inv, err := spec.build(c.req, func() (string, error) {
			t.Errorf("%s: asked for a prompt file", c.backend)
			return "", os.ErrInvalid
		})
		if err != nil {
			t.Fatalf("%s: %v", c.backend, err)
		}
		if diff := cmp.Diff(c.args, inv.Args); diff != "" {
			t.Errorf("%s %+v: args (-want +got):\n%s", c.backend, c.req.Model, diff)
		}
		if diff := cmp.Diff(c.env, inv.Env); diff != "" {
			t.Errorf("%s: env (-want +got):\n%s", c.backend, diff)
		}
		if inv.Stdin == nil || *inv.Stdin != c.req.Prompt {
			t.Errorf("%s: the prompt is not on standard input", c.backend)
		}
		for _, a := range inv.Args {
			if len(a) > PromptArgMax || strings.Contains(a, c.req.Prompt) {
				t.Errorf("%s: the prompt is on the command line", c.backend)
			}
		}
	}
}

// writeExe writes an executable shell script.
func writeExe(t *testing.T, dir, name, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// versionOutputs are the real answers to --version of the npm builds.
var versionOutputs = map[string]string{
	"claude":   "2.1.197 (Claude Code)",
	"codex":    "codex-cli 0.169.0",
	"copilot":  "GitHub Copilot CLI 1.0.102.\nRun 'copilot update' to check for updates.",
	"gemini":   "0.61.0",
	"opencode": "1.18.33",
	"qwen":     "0.24.4",
	"kilo":     "7.7.7",
}

func TestCheck(t *testing.T) {
	ctx := t.Context()
	for _, name := range Builtins {
		t.Run(name, func(t *testing.T) {
			empty := t.TempDir()
			reg := &Registry{Env: []string{"PATH=" + empty}}
			a, err := reg.Get(name)
			if err != nil {
				t.Fatal(err)
			}
			if av := a.Check(ctx); av.Status != Missing {
				t.Errorf("no executable: status %q, want %q", av.Status, Missing)
			}

			good := t.TempDir()
			// Only shell builtins: PATH holds nothing but the fake.
			writeExe(t, good, name, "printf '%s\\n' '"+strings.ReplaceAll(versionOutputs[name], "\n", "' '")+"'\n")
			a, _ = (&Registry{Env: []string{"PATH=" + good}}).Get(name)
			av := a.Check(ctx)
			want, _ := parseVersion(versionOutputs[name])
			if av.Status != Available || av.Version != want.String() || av.Path != filepath.Join(good, name) {
				t.Errorf("current version: got %+v, want available %s", av, want)
			}

			old := t.TempDir()
			writeExe(t, old, name, "echo 0.0.1\n")
			a, _ = (&Registry{Env: []string{"PATH=" + old}}).Get(name)
			if av := a.Check(ctx); av.Status != Unsupported || av.Version != "0.0.1" || av.Details == "" {
				t.Errorf("old version: got %+v, want unsupported", av)
			}

			broken := t.TempDir()
			writeExe(t, broken, name, "echo 'something went wrong' >&2; exit 3\n")
			a, _ = (&Registry{Env: []string{"PATH=" + broken}}).Get(name)
			if av := a.Check(ctx); av.Status != Unsupported || !strings.Contains(av.Details, "something went wrong") {
				t.Errorf("--version failing: got %+v, want unsupported with the reason", av)
			}
		})
	}
}

func TestMinVersionsAcceptRecordedVersions(t *testing.T) {
	for _, name := range Builtins {
		spec, _ := builtinSpec(name)
		v, ok := parseVersion(versionOutputs[name])
		if !ok || v.Less(spec.minVersion) {
			t.Errorf("%s: minVersion %s refuses the recorded version %s", name, spec.minVersion, v)
		}
	}
}

// TestRunWithFakeCLI runs each backend through Agent.Run against a fake
// executable that records its arguments and standard input and prints a
// recorded success stream: the whole path from Request to Response.
func TestRunWithFakeCLI(t *testing.T) {
	fixClock(t)
	prompt := strings.Repeat("line of a long prompt\n", (PromptArgMax/22)+100)
	for _, name := range Builtins {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			sdir, sname, ok := sample(name, "text")
			if !ok {
				t.Fatal("no text sample")
			}
			samplePath, _ := filepath.Abs(filepath.Join(sdir, sname+".stdout"))
			writeExe(t, dir, name, `
if [ "$1" = --version ]; then echo 99.0.0; exit 0; fi
printf '%s\n' "$@" > "$FAKE_DIR/args"
env > "$FAKE_DIR/env"
cat > "$FAKE_DIR/stdin"
cat "$FAKE_SAMPLE"
`)
			reg := &Registry{Env: []string{"PATH=" + dir + ":/usr/bin:/bin", "FAKE_DIR=" + dir, "FAKE_SAMPLE=" + samplePath}}
			a, err := reg.Get(name)
			if err != nil {
				t.Fatal(err)
			}
			var seen int
			r, err := a.Run(t.Context(), Request{Prompt: prompt, Model: "m1", SessionID: "sess-1", Dir: dir, Output: func(p []byte) { seen += len(p) }})
			if err != nil {
				t.Fatal(err)
			}
			if r.Failure != nil || r.ExitCode != 0 {
				t.Fatalf("failure %+v, exit %d", r.Failure, r.ExitCode)
			}
			stdout, end := readCase(t, sdir, sname)
			spec, _ := builtinSpec(name)
			want := parseStream(spec.newParser(), stdout, end)
			if diff := cmp.Diff(wantOf(want), wantOf(r)); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if seen != len(stdout) {
				t.Errorf("Output saw %d bytes, want %d", seen, len(stdout))
			}
			stdin, _ := os.ReadFile(filepath.Join(dir, "stdin"))
			if string(stdin) != prompt {
				t.Errorf("standard input: %d bytes, want the %d-byte prompt", len(stdin), len(prompt))
			}
			args, _ := os.ReadFile(filepath.Join(dir, "args"))
			if len(args) > 1024 {
				t.Errorf("command line of %d bytes: the prompt went on it", len(args))
			}
			for _, want := range []string{"m1", "sess-1"} {
				if !slices.ContainsFunc(strings.Split(string(args), "\n"), func(a string) bool { return strings.Contains(a, want) }) {
					t.Errorf("arguments %q lack %q", args, want)
				}
			}
			if name == "gemini" {
				env, _ := os.ReadFile(filepath.Join(dir, "env"))
				if !strings.Contains(string(env), "GEMINI_CLI_TRUST_WORKSPACE=true\n") {
					t.Error("gemini ran without GEMINI_CLI_TRUST_WORKSPACE=true")
				}
			}
		})
	}
}

func TestFieldOfUnexpectedTypeKeepsTheEvent(t *testing.T) {
	// A field that changes type drops that field only, not the event.
	p := &opencodeParser{text: newReply()}
	p.Line([]byte(`{"type":"step_finish","sessionID":"ses_1","part":{"cost":"0.01","tokens":{"input":10,"output":2,"reasoning":0,"cache":{"read":0,"write":0}}}}`), false)
	r := p.Finish(callEnd{})
	if r.SessionID != "ses_1" || r.Usage.InputTokens != 10 || r.Usage.OutputTokens != 2 || r.Usage.CostKnown {
		t.Errorf("opencode: got %+v", r)
	}
	c := &codexParser{text: newReply()}
	c.Line([]byte(`{"type":"thread.started","thread_id":"th_1"}`), false)
	c.Line([]byte(`{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":"many","output_tokens":7}}`), false)
	r = c.Finish(callEnd{})
	if r.Failure != nil || r.Usage.InputTokens != 100 || r.Usage.OutputTokens != 7 {
		t.Errorf("codex: got %+v", r)
	}
}
