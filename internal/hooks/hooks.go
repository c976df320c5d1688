// Package hooks tells the user's programs and webhooks of a run's events:
// a command run with the event as JSON on its stdin (never through a
// shell), or a URL the event is POSTed to as JSON. A hook never changes a
// run: it has a time limit, it runs beside the run, and what went wrong is
// handed back to be recorded and said, once for each hook.
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jlgcli/jlgcli/internal/millis"
)

// The events.
const (
	// RunStarted: a run (loop, task or batch) starts, or resumes.
	RunStarted = "run.started"
	// RunEnded: a run ends, however it ends.
	RunEnded = "run.ended"
	// TaskAttempt: a task's attempt is judged (its verdict in Action).
	TaskAttempt = "task.attempt"
	// TaskEscalated: a task's attempt hands the task to the next tier.
	TaskEscalated = "task.escalated"
	// BatchTaskEnded: a task of a batch ended (merged, failed, blocked).
	BatchTaskEnded = "batch.task.ended"
	// RunWaiting: a run waits for a rate limit or a quota to reset.
	RunWaiting = "run.waiting"
	// RunNeedsAttention: a run stopped where a person must act: a refused
	// landing, a conflict, a budget spent, an agent not logged in.
	RunNeedsAttention = "run.needs-attention"
	// PRRound: a round of a pull-request run ended (pushed, or not).
	PRRound = "pr.round"
)

// Events are the events a hook can take, "*" taking them all.
var Events = []string{RunStarted, RunEnded, TaskAttempt, TaskEscalated, BatchTaskEnded, RunWaiting, RunNeedsAttention, PRRound}

// Known tells whether name is an event a hook can take ("*" included).
func Known(name string) bool { return name == "*" || slices.Contains(Events, name) }

// DefaultTimeout is how long a hook may take, its tries included.
const DefaultTimeout = 30 * time.Second

// Tries is how many times a webhook is sent before it is given up.
const Tries = 3

// Hook is one [[hooks]] entry: the events it takes, and either a command
// (argv) or a URL.
type Hook struct {
	On      []string `toml:"on"`
	Command []string `toml:"command"`
	URL     string   `toml:"url"`
}

// Takes tells whether h takes event.
func (h Hook) Takes(event string) bool {
	return slices.Contains(h.On, "*") || slices.Contains(h.On, event)
}

// String names h on one line, without what a URL hides in its path (a
// webhook's secret): "command notify-send jlgcli", "url
// https://hooks.slack.com/…".
func (h Hook) String() string {
	if h.URL != "" {
		u, err := url.Parse(h.URL)
		if err != nil {
			return "url (unparsable)"
		}
		s := "url " + u.Scheme + "://" + u.Host
		if u.Path != "" && u.Path != "/" {
			s += "/…"
		}
		return s
	}
	args := make([]string, len(h.Command))
	for i, a := range h.Command {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\") {
			a = strconv.Quote(a)
		}
		args[i] = a
	}
	s := strings.Join(args, " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return "command " + s
}

// Whole names h as a person deciding to trust it must see it: a command's
// every argument, none cut, each quoted as a POSIX shell would need it;
// a URL's scheme and host (its path, the webhook's secret, hidden).
func (h Hook) Whole() string {
	if h.URL != "" {
		return h.String()
	}
	args := make([]string, len(h.Command))
	for i, a := range h.Command {
		args[i] = ShellQuote(a)
	}
	return "command " + strings.Join(args, " ")
}

// ShellQuote quotes s for a POSIX shell when it needs it, so that a
// command shown can be pasted.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@%,=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Check says what is wrong with h, "" when nothing.
func (h Hook) Check() (key, msg string) {
	if len(h.On) == 0 {
		return "on", "must list the events the hook takes (" + strings.Join(Events, ", ") + "), or \"*\""
	}
	for _, e := range h.On {
		if !Known(e) {
			return "on", fmt.Sprintf("unknown event %q (want %s, or \"*\")", e, strings.Join(Events, ", "))
		}
	}
	switch {
	case len(h.Command) > 0 && h.URL != "":
		return "command", "a hook has a command or a url, not both"
	case len(h.Command) == 0 && h.URL == "":
		return "command", "a hook needs a command (a list: the program and its arguments) or a url"
	case len(h.Command) > 0 && h.Command[0] == "":
		return "command", "must be a non-empty list: the program and its arguments"
	case h.URL != "":
		u, err := url.Parse(h.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "url", fmt.Sprintf("%q: want an http:// or https:// URL", h.URL)
		}
	}
	return "", ""
}

// Event is what a hook is told, as JSON. Event, RunID, Command and Text
// are always set; the rest where the event has them.
type Event struct {
	Event   string `json:"event"`
	RunID   string `json:"runId"`
	Command string `json:"command"`
	Status  string `json:"status,omitempty"`
	// ExitCode is the run's (or a batch's task's) exit code, where it has
	// ended.
	ExitCode *int `json:"exitCode,omitempty"`
	// Text is one line that says it all, for chats (Slack and Discord-style
	// webhooks show it).
	Text string    `json:"text"`
	Time time.Time `json:"time"`

	Title      string           `json:"title,omitempty"`
	Details    string           `json:"details,omitempty"`
	CostUSD    *float64         `json:"costUsd,omitempty"`
	DurationMs *millis.Duration `json:"durationMs,omitempty"`
	// Branch and Commit are a task's branch and the commit it landed as
	// (or its work in progress).
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
	// BatchID is the batch of a task run or of a batch's task (TaskID, its
	// sheet's id).
	BatchID string `json:"batchId,omitempty"`
	TaskID  string `json:"taskId,omitempty"`
	// Attempt, Tier and Action are a task attempt's number, tier and
	// verdict (pass, retry, nudge, escalate, stop); Gate its checks'.
	Attempt int    `json:"attempt,omitempty"`
	Tier    string `json:"tier,omitempty"`
	Action  string `json:"action,omitempty"`
	Gate    string `json:"gate,omitempty"`
	// ResetAt is when the limit a run waits for resets.
	ResetAt *time.Time `json:"resetAt,omitempty"`
	// Reason says why a run needs attention.
	Reason string `json:"reason,omitempty"`
}

// Int, Millis and Float make the optional numbers of an Event.
func Int(n int) *int                            { return &n }
func Millis(d millis.Duration) *millis.Duration { return &d }
func Float(f float64) *float64                  { return &f }
func Time(t time.Time) *time.Time               { return &t }

// Answer is what one hook answered to an event.
type Answer struct {
	// Hook is the hook's place in the list, from 0; Name says which it is.
	Hook int    `json:"hook"`
	Name string `json:"name"`
	// Event is the event sent.
	Event string `json:"event"`
	// Err is what went wrong (nil: the hook took it); Reply is the first
	// line of what it said: the command's output, the HTTP status.
	Err   error  `json:"-"`
	Error string `json:"error,omitempty"`
	Reply string `json:"reply,omitempty"`
	// Tries is how many times it was sent; Ms how long it took.
	Tries int             `json:"tries"`
	Ms    millis.Duration `json:"ms"`
}

// Failed counts the answers of hooks that failed.
func Failed(answers []Answer) int {
	n := 0
	for _, a := range answers {
		if a.Err != nil {
			n++
		}
	}
	return n
}

// Dispatcher sends events to hooks.
type Dispatcher struct {
	Hooks []Hook
	// Timeout bounds each hook, its tries included; 0: DefaultTimeout.
	Timeout time.Duration
	// Environ is the commands' environment; nil: jlgcli's own.
	Environ []string
	// Warn says a hook's failure on stderr, once for each hook; nil:
	// nothing is said.
	Warn func(string)
	// Client sends the webhooks; nil: a client of its own.
	Client *http.Client
	// Backoff is the wait before a webhook's second try, doubled before
	// each next; 0: half a second.
	Backoff time.Duration
	// Desktop, when set, rings and notifies the desktop when a long run
	// ends (a hook of its own, run.ended only).
	Desktop *Desktop

	mu     sync.Mutex
	warned map[int]bool
	// last is, for each hook, the end of the delivery sent to it last: a
	// hook gets the events one after the other, in the order they came.
	last map[int]chan struct{}
	wg   sync.WaitGroup
}

// Notify sends e to each hook that takes it, beside the caller: it
// returns at once. failed (nil: none) is given each hook's answer that
// went wrong. The returned channel is closed once every one has answered,
// or given up at its time limit.
func (d *Dispatcher) Notify(e Event, failed func(Answer)) <-chan struct{} {
	done := make(chan struct{})
	if d == nil {
		close(done)
		return done
	}
	var wg sync.WaitGroup
	for i, h := range d.Hooks {
		if !h.Takes(e.Event) {
			continue
		}
		wg.Add(1)
		d.wg.Add(1)
		prev, mine := d.turn(i)
		go func() {
			defer d.wg.Done()
			defer wg.Done()
			defer close(mine)
			if prev != nil {
				<-prev
			}
			a := d.send(context.Background(), i, h, e)
			if a.Err == nil {
				return
			}
			if failed != nil {
				failed(a)
			}
			d.warn(a)
		}()
	}
	if d.Desktop.takes(e) {
		wg.Add(1)
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), d.timeout())
			defer cancel()
			_ = d.Desktop.notify(ctx, e) // a notification that fails is no news
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

// turn queues a delivery to hook i: it starts once prev (the delivery
// before it, nil for none) has ended, and closes mine when it ends.
func (d *Dispatcher) turn(i int) (prev, mine chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.last == nil {
		d.last = map[int]chan struct{}{}
	}
	prev, mine = d.last[i], make(chan struct{})
	d.last[i] = mine
	return prev, mine
}

func (d *Dispatcher) timeout() time.Duration {
	if d.Timeout <= 0 {
		return DefaultTimeout
	}
	return d.Timeout
}

// Send sends e to each hook that takes it and waits for their answers, in
// the hooks' order.
func (d *Dispatcher) Send(ctx context.Context, e Event) []Answer {
	var (
		answers []Answer
		wg      sync.WaitGroup
		mu      sync.Mutex
	)
	for i, h := range d.Hooks {
		if !h.Takes(e.Event) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := d.send(ctx, i, h, e)
			mu.Lock()
			answers = append(answers, a)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.SortFunc(answers, func(a, b Answer) int { return a.Hook - b.Hook })
	return answers
}

// Wait waits until the hooks under way have answered or given up: each
// within its time limit.
func (d *Dispatcher) Wait() {
	if d != nil {
		d.wg.Wait()
	}
}

func (d *Dispatcher) warn(a Answer) {
	d.mu.Lock()
	if d.warned == nil {
		d.warned = map[int]bool{}
	}
	first := !d.warned[a.Hook]
	d.warned[a.Hook] = true
	d.mu.Unlock()
	if first && d.Warn != nil {
		d.Warn(fmt.Sprintf("hook %d (%s) failed on %s: %v (the run goes on; its later failures are in the run's journal)", a.Hook+1, a.Name, a.Event, a.Err))
	}
}

// send sends e to hook i, h, within the time limit.
func (d *Dispatcher) send(ctx context.Context, i int, h Hook, e Event) Answer {
	timeout := d.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := json.Marshal(e)
	a := Answer{Hook: i, Name: h.String(), Event: e.Event}
	began := time.Now()
	if err == nil {
		if h.URL != "" {
			a.Reply, a.Tries, err = d.post(ctx, h.URL, body)
		} else {
			a.Tries = 1
			a.Reply, err = d.run(ctx, h.Command, body)
		}
	}
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("no answer within %s: %w", timeout, err)
	}
	a.Ms = millis.Of(time.Since(began))
	if a.Err = err; err != nil {
		a.Error = err.Error()
	}
	return a
}

// run runs argv with body on its stdin; its process group is killed at
// the time limit.
func (d *Dispatcher) run(ctx context.Context, argv []string, body []byte) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = d.Environ
	cmd.Stdin = bytes.NewReader(body)
	var out capped
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	reply := firstLine(out.String())
	if err != nil {
		if reply != "" {
			err = fmt.Errorf("%w: %s", err, reply)
		}
		return reply, err
	}
	return reply, nil
}

// capped keeps the first 64 KiB written to it (a hook's answer is its
// first line) and drops the rest: a hook that floods its output costs no
// memory.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := 64<<10 - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// post POSTs body to u, again after a growing wait when it fails for a
// reason that may pass (no connection, 429, 5xx), up to Tries times.
func (d *Dispatcher) post(ctx context.Context, u string, body []byte) (reply string, tries int, err error) {
	client := d.Client
	if client == nil {
		client = http.DefaultClient
	}
	wait := d.Backoff
	if wait <= 0 {
		wait = 500 * time.Millisecond
	}
	for tries = 1; ; tries++ {
		var again bool
		reply, again, err = postOnce(ctx, client, u, body)
		if err == nil || !again || tries == Tries {
			return reply, tries, err
		}
		select {
		case <-ctx.Done():
			return reply, tries, err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func postOnce(ctx context.Context, client *http.Client, u string, body []byte) (reply string, again bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return "", false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "jlgcli-hooks")
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL may hold a secret
		}
		return "", true, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	reply = resp.Status
	if l := firstLine(string(b)); l != "" {
		reply += ": " + l
	}
	if resp.StatusCode/100 != 2 {
		return reply, resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500, errors.New(reply)
	}
	return reply, false, nil
}

// firstLine is the first non-empty line of s, cut to 200 bytes.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 200 {
				l = l[:200] + "…"
			}
			return l
		}
	}
	return ""
}

// Sample is an example of event, as `jlgcli hooks test` sends it: run
// "sample", with every field the event has.
func Sample(event string) Event {
	now := time.Now().UTC()
	e := Event{Event: event, RunID: "sample", Command: "task", Status: "running", Time: now, Title: "A sample task",
		Text: "jlgcli hooks test: a sample " + event + " event"}
	switch event {
	case RunEnded:
		e.Status, e.ExitCode, e.CostUSD, e.DurationMs = "done", Int(0), Float(0.42), Millis(90_000)
		e.Branch, e.Commit = "jlgcli/a-sample-task", "0123456789abcdef0123456789abcdef01234567"
	case TaskAttempt, TaskEscalated:
		e.Attempt, e.Tier, e.Gate, e.Action = 1, "fast", "fail", "retry"
		if event == TaskEscalated {
			e.Action = "escalate"
		}
	case BatchTaskEnded:
		e.Command, e.BatchID, e.TaskID, e.Status, e.ExitCode = "batch", "sample", "a", "done", Int(0)
	case RunWaiting:
		e.ResetAt = Time(now.Add(10 * time.Minute))
	case RunNeedsAttention:
		e.Status, e.ExitCode, e.Reason = "budget-exceeded", Int(7), "its budget is spent: raise it and resume"
	}
	return e
}
