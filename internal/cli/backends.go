package cli

import (
	"encoding/json"
	"fmt"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/runs"
)

type backendsOptions struct {
	json bool
}

type backendRow struct {
	Name      string       `json:"name"`
	Installed bool         `json:"installed"`
	Path      string       `json:"path,omitempty"`
	Version   string       `json:"version,omitempty"`
	Status    agent.Status `json:"status"`
	Details   string       `json:"details,omitempty"`
	// Package is the npm package that installs a built-in backend's CLI.
	Package string `json:"package,omitempty"`
	// Note warns of what will make an installed CLI's calls fail here.
	Note string `json:"note,omitempty"`
}

func newBackendsCmd(stdio *Stdio) *cobra.Command {
	o := &backendsOptions{}
	cmd := &cobra.Command{
		Use:   "backends",
		Short: "List every backend: installed or not, path, version and status",
		Long: `List every backend: the built-in ones (claude, codex, copilot, gemini, opencode, qwen,
kilo), then those of the configuration. For each: whether its CLI is installed, its version,
status and path; under the table, the npm package that installs a missing built-in CLI, why one
cannot be used, and a note when something here will make its calls fail (claude as root
without IS_SANDBOX=1). --json prints the same as an array of objects, with the npm package
of each built-in backend (package).`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print an array of objects")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := loadConfig(stdio, nil)
		if err != nil {
			return err
		}
		reg := runs.Registry(cfg, stdio.base())
		names := reg.Names()
		rows := make([]backendRow, len(names))
		var wg sync.WaitGroup
		for i, name := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a, err := reg.Get(name)
				if err != nil {
					rows[i] = backendRow{Name: name, Status: agent.Missing, Details: err.Error()}
					return
				}
				av := a.Check(cmd.Context())
				rows[i] = backendRow{Name: name, Installed: av.Status != agent.Missing, Path: av.Path, Version: av.Version, Status: av.Status,
					Details: av.Details, Note: av.Note, Package: agent.Package(name)}
			}()
		}
		wg.Wait()
		if o.json {
			enc := json.NewEncoder(stdio.Out)
			enc.SetIndent("", "  ")
			return enc.Encode(rows)
		}
		tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "BACKEND\tINSTALLED\tVERSION\tSTATUS\tPATH")
		for _, r := range rows {
			installed := "no"
			if r.Installed {
				installed = "yes"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, installed, dash(r.Version), r.Status, dash(r.Path))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, r := range rows {
			switch {
			case r.Status == agent.Missing && r.Package != "":
				fmt.Fprintf(stdio.Out, "%s: not installed; install it with: %s\n", r.Name, agent.InstallCommand(r.Name))
			case r.Details != "" && r.Status != agent.Missing:
				fmt.Fprintf(stdio.Out, "%s: %s\n", r.Name, r.Details)
			}
			if r.Note != "" {
				fmt.Fprintf(stdio.Out, "%s: note: %s\n", r.Name, r.Note)
			}
		}
		return nil
	}
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
