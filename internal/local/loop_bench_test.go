package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// benchAgent is the agent of BenchmarkIteration: a real process that reads
// its prompt and answers one line at once, never the marker.
var benchAgent = agent.CommandSpec{Command: []string{"sh", "-c", "cat >/dev/null; echo working on it"}}

// BenchmarkIteration sets a loop iteration beside its physical limit, one
// process of the same agent each:
//
//   - limit: what an iteration cannot do without: spawn the agent (through
//     the same supervised call), capture its output, and make one record of
//     it durable (one write, one fsync);
//   - loop: a loop run of that agent as `jlgcli loop` makes it, journal,
//     output log, checkpoint and index included, outside a repository,
//     unconfined as limit is.
//
// ns/op is per iteration; what loop costs beyond limit is jlgcli's
// bookkeeping around each agent call.
func BenchmarkIteration(b *testing.B) {
	b.Run("limit", func(b *testing.B) {
		dir := b.TempDir()
		a := benchAgentOf(b)
		f, err := os.OpenFile(filepath.Join(dir, "journal"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		var out []byte
		req := agent.Request{Prompt: "p", Dir: dir, Output: func(p []byte) { out = append(out, p...) }}
		for b.Loop() {
			out = out[:0]
			resp, err := a.Run(context.Background(), req)
			if err != nil || resp.ExitCode != 0 {
				b.Fatal(err, resp.ExitCode)
			}
			if _, err := f.Write(append(out, '\n')); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("loop", func(b *testing.B) {
		dir, state := b.TempDir(), b.TempDir()
		a := benchAgentOf(b)
		s := LoopSpec{Backend: "bench", Command: &benchAgent, Cwd: dir, MaxIterations: b.N, TimeoutMs: millis.Of(time.Hour),
			CompletionMode: "marker", Marker: "DONE", Sandbox: sandbox.Config{Mode: sandbox.Off}}
		b.ResetTimer()
		res, err := StartLoop(context.Background(), s, a, "p", state, Parts{})
		if err != nil || res.Status != engine.StatusMaxIterations || res.Iterations != b.N {
			b.Fatalf("%v: %s after %d iterations: %s", err, res.Status, res.Iterations, res.Details)
		}
	})
}

// benchAgentOf is benchAgent as a loop gets it.
func benchAgentOf(b *testing.B) agent.Agent {
	a, err := Parts{}.Registry(map[string]agent.CommandSpec{"bench": benchAgent}, nil, nil).Get("bench")
	if err != nil {
		b.Fatal(err)
	}
	return a
}
