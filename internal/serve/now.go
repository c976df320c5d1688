package serve

import (
	"context"
	"fmt"
	"hash"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
)

// What each running agent is doing now, on the runs page's Running lines,
// the board's running cards and a running run's page: the last lines of
// its text and its last tool calls (runs.Now), fetched again with the rest
// of the live part when its output grows (nowDigest).

// How much of it each place shows.
const (
	glanceLines, glanceTools = 3, 3
	cardLines, cardTools     = 3, 2
	pageLines, pageTools     = 12, agent.MaxTools
)

// preview is what a running agent is doing, as a page shows it.
type preview struct {
	// Call says which call it is: "attempt 2 · claude".
	Call  string
	Lines []string
	Tools []agent.ToolCall
}

// previewOf is the preview of run id, of kind (its command), with at most
// lines lines and tools tool calls; nil when its agent has written nothing
// yet or it cannot be read.
func previewOf(ctx context.Context, src Source, id, kind string, lines, tools int) *preview {
	a, err := src.Now(ctx, id, lines)
	if err != nil || !a.Found {
		return nil
	}
	p := &preview{Call: callName(kind, a.N), Lines: a.Lines, Tools: a.Tools[max(0, len(a.Tools)-tools):]}
	if a.Backend != "" {
		p.Call += " · " + a.Backend
	}
	return p
}

// callName names agent call n of a run of kind.
func callName(kind string, n int) string {
	switch {
	case kind == "task" && n == 0:
		return "planner"
	case kind == "task":
		return fmt.Sprintf("attempt %d", n)
	}
	return fmt.Sprintf("iteration %d", n)
}

// agentRuns reports whether a run of kind calls agents itself (a batch's
// and a pull-request run's agents run in their tasks' runs).
func agentRuns(kind string) bool { return kind != "batch" && kind != "pr" }

// nowDigest adds to h where the agent of each live running run of rows
// stands (its call and how much it wrote): the change stream fires when
// it writes, so that the previews move.
func nowDigest(ctx context.Context, src Source, rows []runs.Listed, h hash.Hash) {
	for _, r := range rows {
		if !r.Live || r.Status != store.Running || !agentRuns(r.Command) {
			continue
		}
		if a, err := src.Now(ctx, r.ID, 0); err == nil {
			fmt.Fprintf(h, "now %s %d %d\n", r.ID, a.N, a.Size)
		}
	}
}
