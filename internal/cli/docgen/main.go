// Command docgen writes docs/commands.md, the reference of every command
// and flag, from jlgcli's command tree (cli.CommandsPage). Run it from the
// repository's root: go run ./internal/cli/docgen (or make docs).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/jlgcli/jlgcli/internal/cli"
)

func main() {
	out := flag.String("o", "docs/commands.md", "the file to write")
	flag.Parse()
	if err := os.WriteFile(*out, []byte(cli.CommandsPage()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}
