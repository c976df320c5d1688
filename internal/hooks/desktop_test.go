package hooks

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The end of a run of over a minute rings the bell and shows a desktop
// notification; a short run, a batch's task and the other events do not.
func TestDesktopNotifiesTheEndOfALongRun(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "notify-send")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" >> "+got+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var bell bytes.Buffer
	d := &Dispatcher{Desktop: &Desktop{Bell: &bell, GOOS: "linux", LookPath: func(name string) (string, error) {
		return filepath.Join(dir, name), nil
	}}}
	long := Event{Event: RunEnded, RunID: "r", Command: "loop", Status: "done", ExitCode: Int(0), DurationMs: Millis(61_000), Text: "loop r ended done"}
	<-d.Notify(long, nil)
	if bell.String() != "\a" {
		t.Errorf("bell %q", bell.String())
	}
	b, err := os.ReadFile(got)
	if err != nil || string(b) != "--app-name=jlgcli\njlgcli: loop done\nloop r ended done\n" {
		t.Fatalf("notify-send got %q (%v)", b, err)
	}

	short := long
	short.DurationMs = Millis(59_000)
	inBatch := long
	inBatch.BatchID = "b"
	started := long
	started.Event = RunStarted
	for _, e := range []Event{short, inBatch, started} {
		<-d.Notify(e, nil)
	}
	if b2, _ := os.ReadFile(got); string(b2) != string(b) || bell.String() != "\a" {
		t.Errorf("notified again: %q, bell %q", b2, bell.String())
	}
}

func TestDesktopCommands(t *testing.T) {
	e := Event{Command: "task", Status: "done", Text: `say "hi" \ there`}
	mac := (&Desktop{GOOS: "darwin"}).command(e)
	if len(mac) != 3 || mac[0] != "osascript" || !strings.Contains(mac[2], `display notification "say \"hi\" \\ there" with title "jlgcli: task done"`) {
		t.Errorf("macOS: %q", mac)
	}
	if c := (&Desktop{GOOS: "windows"}).command(e); c != nil {
		t.Errorf("windows: %q", c)
	}
}

// A notification quotes a prompt or a task sheet's title: its control
// characters and bidi overrides are shown escaped, its markup as written.
func TestDesktopHostileText(t *testing.T) {
	e := Event{Command: "task", Status: "done\x1b[8m", Text: "task r ended done: Fix \x1b]52;c;eA==\a<a href=\"http://evil\">it</a> & \u202eexe\nmore"}
	linux := (&Desktop{GOOS: "linux"}).command(e)
	want := []string{"notify-send", "--app-name=jlgcli", `jlgcli: task done\x1b[8m`,
		`task r ended done: Fix \x1b]52;c;eA==\a&lt;a href="http://evil"&gt;it&lt;/a&gt; &amp; \u202eexe\nmore`}
	if strings.Join(linux, "|") != strings.Join(want, "|") {
		t.Errorf("linux: %q, want %q", linux, want)
	}
	mac := (&Desktop{GOOS: "darwin"}).command(e)
	if !strings.Contains(mac[2], `display notification "task r ended done: Fix \\x1b]52;c;eA==\\a<a href=\"http://evil\">it</a> & \\u202eexe\\nmore" with title "jlgcli: task done\\x1b[8m"`) {
		t.Errorf("macOS: %q", mac)
	}
}
