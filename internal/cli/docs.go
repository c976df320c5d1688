package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// CommandsPage is docs/commands.md: every command of the tree users get,
// its synopsis and help, and every flag with its type, default and usage,
// written from the commands themselves so that the page cannot drift from
// them. `go run ./internal/cli/docgen` (make docs) writes it, and
// TestDocCommands fails when the committed page differs.
func CommandsPage() string {
	root := newRootCmd(&Stdio{})
	// What Execute adds before it runs a command: the help flag, the
	// version flag, the completion and help commands.
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()

	var b strings.Builder
	b.WriteString("<!-- Generated from the command tree by `go run ./internal/cli/docgen` (make docs). Do not edit. -->\n\n")
	b.WriteString("# Commands and flags\n\n")
	b.WriteString("Every command of `jlgcli`, as `jlgcli COMMAND --help` shows it, with every flag, its default and what\n")
	b.WriteString("it does. Every command also takes `-h, --help`. A flag that is a configuration key says so in\n")
	b.WriteString("parentheses (`config: KEY`); the keys, the files and the environment variables are in\n")
	b.WriteString("[configuration.md](configuration.md).\n\n")

	var cmds, topics []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Deprecated != "" {
			return
		}
		if c.Runnable() || c.HasAvailableSubCommands() {
			cmds = append(cmds, c)
		} else {
			topics = append(topics, c)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)

	b.WriteString("| command | what it does |\n|---|---|\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s |\n", c.CommandPath(), anchor(c.CommandPath()), cell(c.Short))
	}
	for _, c := range topics {
		fmt.Fprintf(&b, "| `jlgcli help %s` | %s |\n", c.Name(), cell(c.Short))
	}
	for _, c := range cmds {
		writeCommand(&b, c)
	}
	return b.String()
}

// writeCommand writes one command's section: synopsis, help, flags.
func writeCommand(b *strings.Builder, c *cobra.Command) {
	fmt.Fprintf(b, "\n## %s\n\n%s\n\n```\n%s\n```\n", c.CommandPath(), c.Short, c.UseLine())
	if long := strings.TrimSpace(c.Long); long != "" {
		fmt.Fprintf(b, "\n```text\n%s\n```\n", long)
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\nSubcommands:")
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				fmt.Fprintf(b, " [`%s`](#%s)", sub.Name(), anchor(sub.CommandPath()))
			}
		}
		b.WriteString(".\n")
	}
	var rows []string
	c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" || (f.Name == "help" && c.HasParent()) {
			return
		}
		rows = append(rows, flagRow(f))
	})
	if len(rows) > 0 {
		b.WriteString("\n| flag | default | meaning |\n|---|---|---|\n")
		b.WriteString(strings.Join(rows, ""))
	}
}

// flagRow is a flag's row: its names and value as help shows them, its
// default, its usage.
func flagRow(f *pflag.Flag) string {
	name, usage := pflag.UnquoteUsage(f)
	names := "--" + f.Name
	if f.Shorthand != "" {
		names = "-" + f.Shorthand + ", " + names
	}
	if name != "" && f.NoOptDefVal == "" {
		names += " " + name
	}
	def := "—"
	switch {
	case f.Value.Type() == "bool" && f.DefValue == "":
		def = "`false`"
	case f.DefValue != "" && f.DefValue != "[]":
		def = "`" + f.DefValue + "`"
	}
	return fmt.Sprintf("| `%s` | %s | %s |\n", names, def, cell(usage))
}

// cell makes text safe in a Markdown table cell: Markdown's own
// characters escaped, so that the text reads as help prints it.
func cell(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>|", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// anchor is the anchor GitHub gives the heading "## text".
func anchor(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}
