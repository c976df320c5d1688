package runs

import (
	"cmp"
	"slices"
	"time"

	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/store"
)

// Usage is what `jlgcli usage` lists: the last known use of each
// subscription window of each backend, and the backends that ran here and
// reported none.
type Usage struct {
	// Windows are sorted by backend, then window.
	Windows []WindowUse `json:"windows"`
	// Silent are the backends of the runs kept here that reported no
	// window (an API-key login, a CLI that reports none), sorted.
	Silent []string `json:"silent"`
}

// WindowUse is the last known use of one subscription window of a backend.
type WindowUse struct {
	store.Window
	// AgeMs is how long before now the agent reported it.
	AgeMs millis.Duration `json:"ageMs"`
}

// UsageOf reads the windows the runs kept under the state root reported
// (their checkpoints, through the index), as of now.
func UsageOf(root string, now time.Time) (Usage, error) {
	idx, err := store.OpenIndex(root)
	if err != nil {
		return Usage{}, err
	}
	defer idx.Close()
	rows, err := idx.List(store.Filter{})
	if err != nil {
		return Usage{}, err
	}
	u := Usage{Windows: []WindowUse{}, Silent: []string{}}
	reported := map[string]bool{}
	for _, w := range local.WindowsOf(rows) {
		u.Windows = append(u.Windows, WindowUse{Window: w, AgeMs: millis.Of(max(now.Sub(w.At), 0))})
		reported[w.Backend] = true
	}
	slices.SortFunc(u.Windows, func(a, b WindowUse) int {
		return cmp.Or(cmp.Compare(a.Backend, b.Backend), cmp.Compare(a.Kind, b.Kind))
	})
	for _, r := range rows {
		if r.Backend != "" && r.Command != "batch" && !reported[r.Backend] && !slices.Contains(u.Silent, r.Backend) {
			u.Silent = append(u.Silent, r.Backend)
		}
	}
	slices.Sort(u.Silent)
	return u, nil
}
