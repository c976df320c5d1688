// Package dag orders the tasks of a batch by their dependencies: it
// refuses an unknown dependency or a cycle, and gives the levels, a
// deterministic topological order, and each task's dependencies and
// dependents.
package dag

import (
	"errors"
	"fmt"
	"slices"
)

// Node is a task and the ids of the tasks it depends on.
type Node struct {
	ID   string
	Deps []string
}

// Graph is an acyclic graph of tasks. Its methods do not change it: it is
// safe for concurrent use.
type Graph struct {
	ids        []string // sorted
	deps       map[string][]string
	dependents map[string][]string
	level      map[string]int
	levels     [][]string
	order      []string
	index      map[string]int // in order
}

// New builds the graph of nodes. A dependency named twice counts once.
// The errors: *DuplicateError for two nodes of one id, *UnknownError for
// each dependency on an id that is no node (joined, sorted by node), and a
// *CycleError for a cycle.
func New(nodes []Node) (*Graph, error) {
	g := &Graph{deps: map[string][]string{}, dependents: map[string][]string{}}
	for _, n := range nodes {
		if _, dup := g.deps[n.ID]; dup {
			return nil, &DuplicateError{ID: n.ID}
		}
		d := slices.Clone(n.Deps)
		slices.Sort(d)
		g.deps[n.ID] = slices.Compact(d)
		g.ids = append(g.ids, n.ID)
	}
	slices.Sort(g.ids)
	var unknown []error
	for _, id := range g.ids {
		for _, d := range g.deps[id] {
			if _, ok := g.deps[d]; !ok {
				unknown = append(unknown, &UnknownError{ID: id, Missing: d})
				continue
			}
			g.dependents[d] = append(g.dependents[d], id)
		}
	}
	if len(unknown) > 0 {
		return nil, errors.Join(unknown...)
	}
	if err := g.layer(); err != nil {
		return nil, err
	}
	return g, nil
}

// layer computes the levels (Kahn's algorithm, a level at a time), or finds
// a cycle among the nodes it could not place.
func (g *Graph) layer() error {
	g.level = make(map[string]int, len(g.ids))
	waiting := make(map[string]int, len(g.ids))
	var cur []string
	for _, id := range g.ids {
		waiting[id] = len(g.deps[id])
		if waiting[id] == 0 {
			cur = append(cur, id)
		}
	}
	for len(cur) > 0 {
		g.levels = append(g.levels, cur)
		var next []string
		for _, id := range cur {
			g.level[id] = len(g.levels) - 1
			for _, dep := range g.dependents[id] {
				if waiting[dep]--; waiting[dep] == 0 {
					next = append(next, dep)
				}
			}
		}
		slices.Sort(next)
		cur = next
	}
	if len(g.level) < len(g.ids) {
		return &CycleError{Path: g.shortestCycle()}
	}
	g.index = make(map[string]int, len(g.ids))
	for _, l := range g.levels {
		for _, id := range l {
			g.index[id] = len(g.order)
			g.order = append(g.order, id)
		}
	}
	return nil
}

// shortestCycle returns a shortest cycle among the nodes without a level,
// as a path that ends where it starts; of the shortest, the one whose
// path is first in lexical order, starting at its smallest id.
func (g *Graph) shortestCycle() []string {
	var best []string
	for _, start := range g.ids {
		if _, placed := g.level[start]; placed {
			continue
		}
		// Breadth-first from start along dependencies, back to start.
		prev := map[string]string{start: ""}
		queue := []string{start}
		var found []string
	search:
		for len(queue) > 0 {
			id := queue[0]
			queue = queue[1:]
			for _, d := range g.deps[id] {
				if d == start {
					for p := id; p != ""; p = prev[p] {
						found = append(found, p)
					}
					slices.Reverse(found)
					found = append(found, start)
					break search
				}
				if _, seen := prev[d]; !seen {
					prev[d] = id
					queue = append(queue, d)
				}
			}
		}
		if found != nil && (best == nil || len(found) < len(best) ||
			len(found) == len(best) && slices.Compare(found, best) < 0) {
			best = found
		}
	}
	return best
}

// IDs are the graph's ids, sorted.
func (g *Graph) IDs() []string { return slices.Clone(g.ids) }

// Len is the number of tasks.
func (g *Graph) Len() int { return len(g.ids) }

// Has reports whether id is a task of the graph.
func (g *Graph) Has(id string) bool {
	_, ok := g.deps[id]
	return ok
}

// Levels are the tasks by level, each sorted: level 0 holds the tasks
// without dependencies, level n those whose deepest dependency is at level
// n-1.
func (g *Graph) Levels() [][]string {
	out := make([][]string, len(g.levels))
	for i, l := range g.levels {
		out[i] = slices.Clone(l)
	}
	return out
}

// Level is the level of id; -1 for an unknown id.
func (g *Graph) Level(id string) int {
	if l, ok := g.level[id]; ok {
		return l
	}
	return -1
}

// Order is a topological order: by level, then by id. Every task comes
// after its dependencies.
func (g *Graph) Order() []string { return slices.Clone(g.order) }

// Index is the position of id in Order; -1 for an unknown id.
func (g *Graph) Index(id string) int {
	if i, ok := g.index[id]; ok {
		return i
	}
	return -1
}

// Deps are the ids id depends on directly, sorted.
func (g *Graph) Deps(id string) []string { return slices.Clone(g.deps[id]) }

// Dependents are the ids that depend on id directly, sorted.
func (g *Graph) Dependents(id string) []string { return slices.Clone(g.dependents[id]) }

// Descendants are the ids that depend on id directly or through others,
// in Order.
func (g *Graph) Descendants(id string) []string {
	seen := map[string]bool{}
	stack := []string{id}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, d := range g.dependents[n] {
			if !seen[d] {
				seen[d] = true
				stack = append(stack, d)
			}
		}
	}
	var out []string
	for _, o := range g.order {
		if seen[o] {
			out = append(out, o)
		}
	}
	return out
}

// DuplicateError is two tasks of one id.
type DuplicateError struct{ ID string }

// Error names the id.
func (e *DuplicateError) Error() string { return fmt.Sprintf("two tasks have the id %s", e.ID) }

// UnknownError is a dependency on an id that names no task.
type UnknownError struct {
	// ID is the task that depends; Missing the id it names.
	ID, Missing string
}

// Error is "sheet ID depends on unknown id MISSING".
func (e *UnknownError) Error() string {
	return fmt.Sprintf("sheet %s depends on unknown id %s", e.ID, e.Missing)
}

// CycleError is a cycle of dependencies.
type CycleError struct {
	// Path is the cycle from its smallest id back to it: a depends on b
	// depends on a is [a b a].
	Path []string
}

// Error is "dependency cycle: a → b → a".
func (e *CycleError) Error() string {
	s := ""
	for i, id := range e.Path {
		if i > 0 {
			s += " → "
		}
		s += id
	}
	return "dependency cycle: " + s
}
