package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/completion"
)

// instantAgent answers at once with a reply that changes each call, so
// that neither no-progress nor completion stops the loop early.
type instantAgent struct {
	reply string
	n     int
}

func (a *instantAgent) Name() string { return "instant" }
func (a *instantAgent) Check(context.Context) agent.Availability {
	return agent.Availability{Status: agent.Available}
}
func (a *instantAgent) Run(_ context.Context, _ agent.Request) (agent.Response, error) {
	a.n++
	// Alternate two replies: no two consecutive replies are equal.
	if a.n%2 == 0 {
		return agent.Response{Text: a.reply + "x"}, nil
	}
	return agent.Response{Text: a.reply}, nil
}

// BenchmarkLoopIteration measures the loop's own cost per iteration (no
// process, an instant agent): ns/op and allocs/op are per iteration.
func BenchmarkLoopIteration(b *testing.B) {
	for _, mode := range []completion.Mode{completion.ModeMarker, completion.ModeJSON} {
		b.Run(string(mode), func(b *testing.B) {
			reply := "Working on step 3 of the task.\nStill going."
			if mode == completion.ModeJSON {
				reply = "Working.\n" + `{"status":"continue","next":"go on"}`
			}
			a := &instantAgent{reply: reply}
			b.ReportAllocs()
			b.ResetTimer()
			Run(context.Background(), a, Options{Prompt: "p", MaxIterations: b.N, Timeout: time.Hour,
				Completion: mode, Marker: "DONE", NoProgressLimit: 3})
		})
	}
}

// BenchmarkLoopLargeReplies measures time and memory per iteration when
// each reply is 4 MiB, the most a call keeps: the transcript holds them.
func BenchmarkLoopLargeReplies(b *testing.B) {
	a := &instantAgent{reply: strings.Repeat("lorem ipsum dolor sit amet\n", (4<<20)/27)}
	b.ReportAllocs()
	b.SetBytes(int64(len(a.reply)))
	b.ResetTimer()
	Run(context.Background(), a, Options{Prompt: "p", MaxIterations: b.N, Timeout: time.Hour,
		Completion: completion.ModeMarker, Marker: "DONE", NoProgressLimit: 3})
}
