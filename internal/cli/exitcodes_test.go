package cli

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
)

// The README's exit-code table and exit.Table, from which the code
// mapping and `jlgcli help exit-codes` are made, name the same codes and
// statuses in the same order.
func TestREADMEExitCodesMatchTheTable(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (\d+) \| ([a-z, -]+) \|`)
	var readme []string
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		readme = append(readme, m[1]+" "+m[2])
	}
	var table []string
	for _, r := range exit.Table {
		names := []string{r.Name}
		for _, s := range r.Statuses {
			if string(s) != r.Name {
				names = append(names, string(s))
			}
		}
		table = append(table, strconv.Itoa(r.Code)+" "+strings.Join(names, ", "))
	}
	if strings.Join(readme, "\n") != strings.Join(table, "\n") {
		t.Errorf("README exit codes:\n%s\n\nengine.ExitCodes:\n%s", strings.Join(readme, "\n"), strings.Join(table, "\n"))
	}
}

// The batch's own exit codes are those of the contract.
func TestBatchExitCodesAreTheContracts(t *testing.T) {
	if exit.Incomplete != engine.StatusIncomplete.ExitCode() || exit.Interrupted != engine.StatusInterrupted.ExitCode() ||
		string(batch.BatchIncomplete) != string(engine.StatusIncomplete) {
		t.Errorf("batch exit codes %d/%d, statuses %s: not the table's", exit.Incomplete, exit.Interrupted, batch.BatchIncomplete)
	}
}

// A landing left half done that the user's changes stopped from ending
// ends any command incomplete (exit 3), as the table says.
func TestInterruptedLandingIsIncomplete(t *testing.T) {
	err := fmt.Errorf("load: %w", &local.LandingError{Refusal: &git.MergeRefusedError{Reason: git.RefusedInterrupted, Detail: "d", Command: "c"}})
	if got := ExitCode(err); got != exit.Incomplete || got != engine.StatusIncomplete.ExitCode() {
		t.Errorf("exit %d, want %d (incomplete)", got, exit.Incomplete)
	}
}
