package cli

import "github.com/jlgcli/jlgcli/internal/buildinfo"

// Version and Commit name the build. A release sets them with
// -ldflags "-X github.com/jlgcli/jlgcli/internal/cli.Version=v1.2.3
// -X github.com/jlgcli/jlgcli/internal/cli.Commit=abc123"; when they are
// not set, the Go toolchain's build information says what was built (see
// buildinfo.Name).
var (
	Version = ""
	Commit  = ""
)

// version is what `jlgcli --version` prints.
func version() string { return buildinfo.Read(Version, Commit) }
