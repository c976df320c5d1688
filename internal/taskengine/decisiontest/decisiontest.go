// Package decisiontest holds the decision table of a task
// (taskengine/testdata/decisions.json), which the local runner's tests and the
// Temporal workflow's tests both run: one table, two paths, the same
// expectations.
package decisiontest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// Tier is a tier of a case: its name and its attempts per step.
type Tier struct {
	Name     string `json:"name"`
	Attempts int    `json:"attempts"`
}

// Attempt is what one scripted attempt gives: the gate passes or not, the
// loop rules find Loop ("": nothing), the call costs CostUSD.
type Attempt struct {
	Pass    bool    `json:"pass"`
	Loop    string  `json:"loop"`
	CostUSD float64 `json:"costUsd"`
}

// Case is one row of the table.
type Case struct {
	Name         string    `json:"name"`
	Tiers        []Tier    `json:"tiers"`
	BudgetUSD    float64   `json:"budgetUsd"`
	EscalateFrom string    `json:"escalateFrom"`
	Attempts     []Attempt `json:"attempts"`
	// What must be decided: the action after each attempt, the tier of
	// each, and the task's final status.
	Actions   []string `json:"actions"`
	TiersUsed []string `json:"tiersUsed"`
	Status    string   `json:"status"`
}

// Cases reads the table.
func Cases() ([]Case, error) {
	_, here, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(here), "..", "testdata", "decisions.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t struct {
		Cases []Case `json:"cases"`
	}
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t.Cases, nil
}
