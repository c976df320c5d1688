// Package buildinfo names the build of jlgcli that runs: its version and
// commit, from what the release set or the Go toolchain's build information.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Read names this build (Name) from version and commit, as -ldflags set
// them ("" when not), and the build information of the running binary.
func Read(version, commit string) string {
	info, _ := debug.ReadBuildInfo()
	return Name(version, commit, info)
}

// Name names a build: the version set by -ldflags, else the module's
// version from info (that of `go install …@v1.2.3`, or the pseudo-version Go
// stamps from the checkout), else "dev"; then the commit set by -ldflags,
// else info's VCS revision (12 hex digits, "-dirty" when the tree had
// changes), and the commit's time. info may be nil.
func Name(version, commit string, info *debug.BuildInfo) string {
	var rev, when string
	modified := false
	if info != nil {
		if version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if version == "" {
		version = "dev"
	}
	if commit == "" && rev != "" {
		commit = rev[:min(len(rev), 12)]
		if modified {
			commit += "-dirty"
		}
	}
	var about []string
	if commit != "" {
		about = append(about, "commit "+commit)
	}
	if when != "" {
		about = append(about, when)
	}
	if len(about) == 0 {
		return version
	}
	return version + " (" + strings.Join(about, ", ") + ")"
}
