package completion

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMarker(t *testing.T) {
	tests := []struct {
		reply, marker string
		done          bool
	}{
		{"Step 2 completed\nDONE", "DONE", true},
		{"DONE", "DONE", true},
		{"  DONE  \n", "DONE", true},
		{"all good\r\nDONE\r\n", "DONE", true},
		{"UNDONE", "DONE", false},
		{"DONE.", "DONE", false},
		{"I am not DONE yet", "DONE", false},
		{"done", "DONE", false},
		{"", "DONE", false},
		{"FINISHED", "FINISHED", true},
		{"<promise>COMPLETE</promise>", "<promise>COMPLETE</promise>", true},
	}
	for _, tt := range tests {
		if got := Parse(tt.reply, ModeMarker, tt.marker).Status == Done; got != tt.done {
			t.Errorf("marker %q in %q: done=%v, want %v", tt.marker, tt.reply, got, tt.done)
		}
	}
}

func TestJSON(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		want  Verdict
	}{
		{"done with summary", `{"status":"done","summary":"Task completed"}`, Verdict{Status: Done, Summary: "Task completed"}},
		{"continue with next", `{"status":"continue","next":"Do step 2"}`, Verdict{Status: Continue, Next: "Do step 2"}},
		{"continue without next", `{"status":"continue"}`, Verdict{Status: Continue}},
		{"in prose", "I did it.\n{\"status\": \"done\", \"summary\": \"ok\"}\nBye", Verdict{Status: Done, Summary: "ok"}},
		{"fenced block", "Here:\n```json\n{\n  \"status\": \"done\",\n  \"summary\": \"fenced\"\n}\n```\n", Verdict{Status: Done, Summary: "fenced"}},
		{"last object wins", `{"status":"continue","next":"a"} then {"status":"done","summary":"b"}`, Verdict{Status: Done, Summary: "b"}},
		{"last with status wins over later objects without", `{"status":"done"} and {"other":1}`, Verdict{Status: Done}},
		{"nested status is not top level", `{"data":{"status":"done"}}`, Verdict{Status: Invalid}},
		{"braces in strings", `{"status":"continue","next":"write {x} and }"}`, Verdict{Status: Continue, Next: "write {x} and }"}},
		{"broken then good", `{"status": oops} {"status":"done"}`, Verdict{Status: Done}},
		{"no json", "This is not JSON at all", Verdict{Status: Invalid}},
		{"unknown status", `{"status":"maybe"}`, Verdict{Status: Invalid}},
		{"empty", "", Verdict{Status: Invalid}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseJSON(tt.reply)
			if got.Status == Invalid && got.Reason == "" {
				t.Error("an invalid verdict must say why")
			}
			got.Reason = ""
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	if _, err := ParseMode("xml"); err == nil || !strings.Contains(err.Error(), "marker") {
		t.Errorf("err %v", err)
	}
	if m, err := ParseMode("json"); err != nil || m != ModeJSON {
		t.Errorf("%v %v", m, err)
	}
}

func FuzzParseJSON(f *testing.F) {
	f.Add(`{"status":"done"}`)
	f.Add("```json\n{\"status\":\"continue\",\"next\":\"x\"}\n```")
	f.Add("{{{{")
	f.Fuzz(func(t *testing.T, s string) {
		v := ParseJSON(s)
		if v.Status != Done && v.Status != Continue && v.Status != Invalid {
			t.Fatalf("status %q", v.Status)
		}
	})
}

func BenchmarkParseJSONLargeReply(b *testing.B) {
	reply := strings.Repeat("some prose with a { brace and more text\n", 100_000) + `{"status":"done"}`
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		if ParseJSON(reply).Status != Done {
			b.Fatal("not done")
		}
	}
}
