// Package sheet reads task sheets: Markdown files, with an optional YAML
// front matter, each describing one task of a batch. The whole text after
// the front matter is the task given to the developer tiers; the front
// matter names the task, its dependencies and the settings it overrides.
package sheet

import "time"

// Sheet is one task sheet.
type Sheet struct {
	// ID names the task in the batch: the front matter's id, else the file
	// name without its extension.
	ID string
	// File is the path the sheet was read from.
	File string
	// Title is the task's short title: the front matter's description,
	// else the text of the first Markdown heading, else the id.
	Title string
	// TitleID is the id that the first heading carries, as the seeds write
	// it ("# id051 — …" gives "id051"); "" when it carries none. It is not
	// the sheet's id: it only resolves the references of dependency lines
	// in other sheets' bodies (see ResolveBodyDepends).
	TitleID string
	// Body is the sheet's text with the front matter removed: the task.
	Body string

	// Depends are the ids of the tasks that must be done first.
	Depends []string
	// DependsFrom says where Depends came from.
	DependsFrom Source
	// BodyRefs are the references found on the body's dependency lines
	// ("Dépendance : `id050`", "Depends on: `a`, `b`") when the front
	// matter has no depends key, whether or not they resolved.
	BodyRefs []Ref

	// Backend and Model make one developer tier; Tiers ("BACKEND[:MODEL]")
	// several. A sheet sets one or the other, never both.
	Backend string
	Model   string
	Tiers   []string
	// Attempts per tier and step (≥ 1).
	Attempts int
	// BudgetUSD is the task's cost budget in US dollars (> 0).
	BudgetUSD float64
	// Checks are the gate's command lines, as --check takes them.
	Checks []string
	// Timeout is the task's time limit (> 0).
	Timeout time.Duration
	// EditTests: the task is meant to change existing tests (the batch's
	// editTests, for this task).
	EditTests bool
	// Review is the task's reviewer, BACKEND[:MODEL], or "none" for no
	// reviewer over the batch's.
	Review string

	// Set tells which keys the front matter set: a batch's default is
	// overridden only by what a sheet sets.
	Set Field
}

// Has reports whether the front matter set every field of f.
func (s *Sheet) Has(f Field) bool { return s.Set&f == f }

// Field is a set of front-matter keys, one bit each.
type Field uint16

// The front-matter keys that a sheet can set.
const (
	FieldID Field = 1 << iota
	FieldDescription
	FieldDepends
	FieldBackend
	FieldModel
	FieldTiers
	FieldAttempts
	FieldBudget
	FieldChecks
	FieldTimeout
	FieldEditTests
	FieldReview
)

// Source says where a sheet's dependencies came from.
type Source string

// The sources of dependencies.
const (
	// FromNone: the sheet declares no dependency.
	FromNone Source = ""
	// FromFrontMatter: the front matter's depends key; every id must be a
	// sheet of the batch.
	FromFrontMatter Source = "front-matter"
	// FromBody: inferred from the body's dependency lines; a reference that
	// names no sheet of the batch is dropped with a warning.
	FromBody Source = "body"
)

// Ref is a dependency named on a dependency line of a sheet's body.
type Ref struct {
	// Name is the text between backquotes.
	Name string
	// Line is its line in the file.
	Line int
	// ID is the sheet it resolved to (ResolveBodyDepends); "" when none.
	ID string
}
