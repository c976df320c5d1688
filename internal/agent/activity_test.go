package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The activity of the CLIs' real streams (testdata): the text they wrote and
// the tools they called, paths made relative to their working directory.
func TestActivityOfRecordedStreams(t *testing.T) {
	done := func(name, input string) ToolCall { return ToolCall{Name: name, Input: input, Done: true} }
	for _, tc := range []struct {
		backend, file, dir string
		lines              int
		want               Activity
	}{
		{"claude", "rec-write", "/tmp/TestAgentConformanceclaudewrite2493508416/001/work", 5,
			Activity{Lines: []string{"wrote it", "DONE"}, Tools: []ToolCall{done("Write", "out.txt")}}},
		{"claude", "rec-write", "", 1,
			Activity{Lines: []string{"DONE"}, Tools: []ToolCall{done("Write", "/tmp/TestAgentConformanceclaudewrite2493508416/001/work/out.txt")}}},
		{"codex", "tool-shell", "", 5,
			Activity{Lines: []string{"I will run a command first.", "Hello from the fake model. All done."},
				Tools: []ToolCall{done("command_execution", "echo tool-ran > tool-output.txt")}}},
		{"codex", "rec-write", "/tmp/TestAgentConformancecodexwrite2515902504/001/work", 5,
			Activity{Lines: []string{"wrote it", "DONE"}, Tools: []ToolCall{done("file_change", "add out.txt")}}},
		{"gemini", "rec-write", "/tmp/TestAgentConformancegeminiwrite2107869568/001/work", 5,
			Activity{Lines: []string{"wrote it", "DONE"}, Tools: []ToolCall{done("write_file", "out.txt")}}},
		{"qwen", "rec-write", "/tmp/TestAgentConformanceqwenwrite395929585/001/work", 5,
			Activity{Lines: []string{"wrote it", "DONE"}, Tools: []ToolCall{done("write_file", "out.txt")}}},
		// A message printed again as it grows counts once; a subagent's
		// words are not the agent's.
		{"qwen", "unknown-events", "/work/repo", 5,
			Activity{Lines: []string{"I will write b.go.", "b.go written.", "DONE"}, Tools: []ToolCall{done("write_file", "b.go")}}},
		{"opencode", "tool-cost", "", 5,
			Activity{Lines: []string{"I will run a command first.", "Hello from the fake model. All done."},
				Tools: []ToolCall{done("bash", "echo tool-ran > tool-output.txt")}}},
		{"kilo", "priced-write", "/tmp/work", 5,
			Activity{Lines: []string{"wrote it", "DONE"}, Tools: []ToolCall{done("write", "out.txt")}}},
		{"copilot", "rec-write", "/tmp/TestAgentConformancecopilotwrite1599247476/001/work", 5,
			Activity{Lines: []string{"wrote it", "DONE"}, Tools: []ToolCall{done("create", "out.txt")}}},
		// Streams without a tool: their text only.
		{"claude", "rec-text", "", 5, Activity{Lines: []string{"Hello from the script", "DONE"}, Tools: []ToolCall{}}},
		{"gemini", "rec-text", "", 5, Activity{Lines: []string{"Hello from the script", "DONE"}, Tools: []ToolCall{}}},
	} {
		t.Run(tc.backend+"/"+tc.file, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", tc.backend, tc.file+".stdout"))
			if err != nil {
				t.Fatal(err)
			}
			got := ActivityOf(tc.backend, out, tc.dir, tc.lines)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("activity (-want +got):\n%s", diff)
			}
		})
	}
}

// Every recorded stream of every CLI reads without a panic, and none of its
// lines is blank or longer than the bound.
func TestActivityOfEveryStream(t *testing.T) {
	outs, _ := filepath.Glob(filepath.Join("testdata", "*", "*.stdout"))
	if len(outs) < 20 {
		t.Fatalf("only %d streams under testdata", len(outs))
	}
	for _, path := range outs {
		out, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		backend := filepath.Base(filepath.Dir(path))
		// Read whole, and from every cut a tail read could make.
		for cut := 0; cut < len(out); cut += max(1, len(out)/7) {
			a := ActivityOf(backend, out[cut:], "", 3)
			if len(a.Lines) > 3 || len(a.Tools) > MaxTools {
				t.Errorf("%s from %d: %d lines, %d tools", path, cut, len(a.Lines), len(a.Tools))
			}
			for _, l := range a.Lines {
				if strings.TrimSpace(l) == "" || strings.Contains(l, "\n") {
					t.Errorf("%s from %d: line %q", path, cut, l)
				}
			}
		}
	}
}

// Tool calls under way, failed, and ended before the tail that is read.
func TestActivityToolStates(t *testing.T) {
	for _, tc := range []struct {
		backend, out string
		want         []ToolCall
	}{
		{"claude", `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"gone","is_error":true}]}}
{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"go test\n  ./...","description":"run the tests"}}]}}
{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/w/a.go"}}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"exit 1"}]}}
{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"t3","name":"TodoWrite","input":{"todos":[{"content":"x"}]}}]}}`,
			[]ToolCall{{Name: "Bash", Input: "go test ./...", Done: true, Error: true}, {Name: "Read", Input: "a.go"},
				{Name: "TodoWrite", Input: `{"todos":[{"content":"x"}]}`}}},
		{"gemini", `{"type":"tool_use","tool_name":"run_shell_command","tool_id":"a","parameters":{"command":"make"}}
{"type":"tool_result","tool_id":"a","status":"error","error":{"message":"exit 2"}}
{"type":"tool_use","tool_name":"read_file","tool_id":"b","parameters":{"absolute_path":"/w/x.go"}}`,
			[]ToolCall{{Name: "run_shell_command", Input: "make", Done: true, Error: true}, {Name: "read_file", Input: "x.go"}}},
		{"codex", `{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"bash -lc 'go vet'","status":"in_progress"}}
{"type":"item.completed","item":{"id":"i2","type":"command_execution","command":"false","exit_code":1,"status":"failed"}}`,
			[]ToolCall{{Name: "command_execution", Input: "go vet"}, {Name: "command_execution", Input: "false", Done: true, Error: true}}},
		{"opencode", `{"type":"tool_use","part":{"tool":"bash","callID":"c","state":{"status":"error","input":{"command":"ls /nope"}}}}`,
			[]ToolCall{{Name: "bash", Input: "ls /nope", Done: true, Error: true}}},
		{"copilot", `{"type":"tool.execution_start","data":{"toolCallId":"c1","toolName":"bash","arguments":{"command":"npm test"}}}
{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":false}}
{"type":"tool.execution_start","data":{"toolCallId":"c2","toolName":"view","arguments":{"path":"/w/README.md"}}}`,
			[]ToolCall{{Name: "bash", Input: "npm test", Done: true, Error: true}, {Name: "view", Input: "README.md"}}},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			got := ActivityOf(tc.backend, []byte(tc.out), "/w", 3)
			if diff := cmp.Diff(tc.want, got.Tools); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

// A command backend's output (or an unknown backend's) is plain text: its
// last lines. Text is kept as text, whatever it holds: only invalid UTF-8 is
// replaced and long lines cut.
func TestActivityPlainAndHostile(t *testing.T) {
	long := strings.Repeat("é", 1000)
	out := "one\n\n  two  \n<script>alert(1)</script>\n\x1b[31mred\x1b[0m \xff\n" + long + "\n"
	got := ActivityOf("my-command", []byte(out), "", 4)
	want := []string{"  two", "<script>alert(1)</script>", "\x1b[31mred\x1b[0m \uFFFD", strings.Repeat("é", maxLineRunes-1) + "…"}
	if diff := cmp.Diff(want, got.Lines); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if len(got.Tools) != 0 {
		t.Errorf("tools of a plain command: %v", got.Tools)
	}
	if got := ActivityOf("claude", []byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"<img src=x onerror=alert(1)>"}]}}`), "", 2); !cmp.Equal(got.Lines, []string{"<img src=x onerror=alert(1)>"}) {
		t.Errorf("hostile text: %q", got.Lines)
	}
	if got := ActivityOf("claude", nil, "", 5); got.Lines == nil || got.Tools == nil {
		t.Errorf("empty activity has nil slices (JSON null): %#v", got)
	}
}

// Many tool calls: the last MaxTools are kept, in order.
func TestActivityKeepsLastTools(t *testing.T) {
	var b strings.Builder
	for i := range 5 * MaxTools {
		fmt.Fprintf(&b, `{"type":"tool_use","tool_name":"t","tool_id":"%d","parameters":{"command":"c%d"}}`+"\n", i, i)
	}
	got := ActivityOf("gemini", []byte(b.String()), "", 1).Tools
	if len(got) != MaxTools || got[0].Input != fmt.Sprint("c", 4*MaxTools) || got[MaxTools-1].Input != fmt.Sprint("c", 5*MaxTools-1) {
		t.Errorf("tools kept: %v", got)
	}
}
