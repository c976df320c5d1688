package runs

import (
	"cmp"
	"slices"
	"time"

	"github.com/jlgcli/jlgcli/internal/runner"
	"github.com/jlgcli/jlgcli/internal/store"
)

// WindowUse is the last known use of one subscription window of a backend,
// as `jlgcli usage` lists it.
type WindowUse struct {
	store.Window
	// AgeMs is how long before now the agent reported it.
	AgeMs int64 `json:"ageMs"`
}

// Usage is the last known use of each window of each backend, across the
// runs kept under the state root (their checkpoints, through the index),
// sorted by backend then window; empty when no agent reported any.
func Usage(root string, now time.Time) ([]WindowUse, error) {
	idx, err := store.OpenIndex(root)
	if err != nil {
		return nil, err
	}
	defer idx.Close()
	if _, err := idx.List(store.Filter{}); err != nil {
		return nil, err
	}
	out := []WindowUse{}
	for _, w := range runner.KnownWindows(idx) {
		out = append(out, WindowUse{Window: w, AgeMs: max(now.Sub(w.At), 0).Milliseconds()})
	}
	slices.SortFunc(out, func(a, b WindowUse) int {
		return cmp.Or(cmp.Compare(a.Backend, b.Backend), cmp.Compare(a.Kind, b.Kind))
	})
	return out, nil
}
