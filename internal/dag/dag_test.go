package dag

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestGraph(t *testing.T) {
	for _, tt := range []struct {
		name   string
		nodes  []Node
		levels [][]string
		order  []string
	}{
		{"empty", nil, nil, nil},
		{"one", []Node{{ID: "a"}}, [][]string{{"a"}}, []string{"a"}},
		{"independent, sorted", []Node{{ID: "c"}, {ID: "a"}, {ID: "b"}}, [][]string{{"a", "b", "c"}}, []string{"a", "b", "c"}},
		{"chain", []Node{{ID: "a", Deps: []string{"b"}}, {ID: "b", Deps: []string{"c"}}, {ID: "c"}},
			[][]string{{"c"}, {"b"}, {"a"}}, []string{"c", "b", "a"}},
		{"diamond, a dependency twice",
			[]Node{{ID: "top"}, {ID: "l", Deps: []string{"top"}}, {ID: "r", Deps: []string{"top", "top"}}, {ID: "end", Deps: []string{"r", "l"}}},
			[][]string{{"top"}, {"l", "r"}, {"end"}}, []string{"top", "l", "r", "end"}},
		{"level is the deepest dependency's plus one",
			[]Node{{ID: "a"}, {ID: "b", Deps: []string{"a"}}, {ID: "c", Deps: []string{"a", "b"}}, {ID: "z"}, {ID: "y", Deps: []string{"z"}}},
			[][]string{{"a", "z"}, {"b", "y"}, {"c"}}, []string{"a", "z", "b", "y", "c"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, err := New(tt.nodes)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.levels, g.Levels(), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("levels (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.order, g.Order(), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("order (-want +got):\n%s", d)
			}
			for i, id := range g.Order() {
				if g.Index(id) != i {
					t.Errorf("Index(%s) = %d, want %d", id, g.Index(id), i)
				}
				for _, d := range g.Deps(id) {
					if g.Index(d) >= i || g.Level(d) >= g.Level(id) {
						t.Errorf("%s comes before its dependency %s", id, d)
					}
				}
			}
			if g.Len() != len(tt.nodes) {
				t.Errorf("Len %d", g.Len())
			}
		})
	}
}

func TestDepsAndDependents(t *testing.T) {
	g, err := New([]Node{
		{ID: "db"}, {ID: "api", Deps: []string{"db"}}, {ID: "ui", Deps: []string{"api", "db"}},
		{ID: "docs", Deps: []string{"ui"}}, {ID: "lone"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id                    string
		deps, dependents, all []string
	}{
		{"db", nil, []string{"api", "ui"}, []string{"api", "ui", "docs"}},
		{"api", []string{"db"}, []string{"ui"}, []string{"ui", "docs"}},
		{"ui", []string{"api", "db"}, []string{"docs"}, []string{"docs"}},
		{"lone", nil, nil, nil},
		{"nope", nil, nil, nil},
	} {
		if d := cmp.Diff(c.deps, g.Deps(c.id), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("Deps(%s): %s", c.id, d)
		}
		if d := cmp.Diff(c.dependents, g.Dependents(c.id), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("Dependents(%s): %s", c.id, d)
		}
		if d := cmp.Diff(c.all, g.Descendants(c.id), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("Descendants(%s): %s", c.id, d)
		}
	}
	if g.Has("nope") || !g.Has("ui") || g.Level("nope") != -1 || g.Index("nope") != -1 {
		t.Error("unknown id")
	}
	// The results are copies.
	g.Deps("ui")[0] = "x"
	g.Levels()[0][0] = "x"
	g.Order()[0] = "x"
	if g.Deps("ui")[0] != "api" || g.Levels()[0][0] != "db" || g.Order()[0] != "db" {
		t.Error("a result shares the graph's memory")
	}
}

func TestCycle(t *testing.T) {
	for _, tt := range []struct {
		name  string
		nodes []Node
		path  []string
		msg   string
	}{
		{"self", []Node{{ID: "a", Deps: []string{"a"}}}, []string{"a", "a"}, "dependency cycle: a → a"},
		{"two", []Node{{ID: "b", Deps: []string{"a"}}, {ID: "a", Deps: []string{"b"}}}, []string{"a", "b", "a"}, "dependency cycle: a → b → a"},
		{"three, with a dependent outside and a clean part",
			[]Node{{ID: "x", Deps: []string{"z"}}, {ID: "y", Deps: []string{"x"}}, {ID: "z", Deps: []string{"y"}},
				{ID: "w", Deps: []string{"x"}}, {ID: "ok"}, {ID: "ok2", Deps: []string{"ok"}}},
			[]string{"x", "z", "y", "x"}, "dependency cycle: x → z → y → x"},
		{"the shortest of two",
			[]Node{{ID: "a", Deps: []string{"b"}}, {ID: "b", Deps: []string{"c"}}, {ID: "c", Deps: []string{"a"}},
				{ID: "m", Deps: []string{"n"}}, {ID: "n", Deps: []string{"m"}}},
			[]string{"m", "n", "m"}, "dependency cycle: m → n → m"},
		{"of equal length, the first",
			[]Node{{ID: "p", Deps: []string{"q"}}, {ID: "q", Deps: []string{"p"}}, {ID: "c", Deps: []string{"d"}}, {ID: "d", Deps: []string{"c"}}},
			[]string{"c", "d", "c"}, "dependency cycle: c → d → c"},
		{"a long cycle with a chord",
			[]Node{{ID: "a", Deps: []string{"b"}}, {ID: "b", Deps: []string{"c", "d"}}, {ID: "c", Deps: []string{"d"}}, {ID: "d", Deps: []string{"a"}}},
			[]string{"a", "b", "d", "a"}, "dependency cycle: a → b → d → a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.nodes)
			var ce *CycleError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v, want a cycle", err)
			}
			if d := cmp.Diff(tt.path, ce.Path); d != "" {
				t.Errorf("path (-want +got):\n%s", d)
			}
			if err.Error() != tt.msg {
				t.Errorf("message %q, want %q", err, tt.msg)
			}
		})
	}
}

func TestUnknownAndDuplicate(t *testing.T) {
	_, err := New([]Node{{ID: "b", Deps: []string{"zz", "a"}}, {ID: "a", Deps: []string{"y"}}})
	var ue *UnknownError
	if !errors.As(err, &ue) || ue.ID != "a" || ue.Missing != "y" {
		t.Fatalf("error %v, want a's unknown y first", err)
	}
	if want := "sheet a depends on unknown id y\nsheet b depends on unknown id zz"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	_, err = New([]Node{{ID: "a"}, {ID: "a"}})
	var de *DuplicateError
	if !errors.As(err, &de) || de.ID != "a" {
		t.Errorf("error %v, want a duplicate", err)
	}
}
