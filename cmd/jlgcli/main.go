// Command jlgcli drives AI coding-agent CLIs until the task is really done.
package main

import (
	"os"

	"github.com/jlgcli/jlgcli/internal/cli"
)

func main() {
	os.Exit(cli.Run())
}
