package plain

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/termsafe"
	"github.com/jlgcli/jlgcli/internal/trust"
)

// Trusted writes what `jlgcli trust` trusted: the file and the start of
// its SHA-256, what it runs or sends outside the sandbox from now on, the
// files of the project its hooks run (which the trust does not cover), and
// the trust it replaced. What the file sets is shown safe for a terminal
// (termsafe: one line each), so that no escape sequence in it hides a
// part of what the user trusts.
func Trusted(w io.Writer, t runs.Trusted) (err error) {
	w, end := safe(w)
	defer end(&err)
	fmt.Fprintf(w, "trusted %s (sha256 %s) as it is now; any change to it takes the trust away\n", t.File, t.SHA256[:12])
	if len(t.Runs) == 0 {
		fmt.Fprintln(w, "it sets nothing that runs or sends outside the sandbox")
	} else {
		fmt.Fprintln(w, "what it runs or sends outside the sandbox, for every run that reads it:")
		for _, r := range t.Runs {
			fmt.Fprintln(w, "  "+termsafe.Line(r))
		}
	}
	for _, p := range t.Unguarded {
		fmt.Fprintf(w, "note: a hook runs %s, a file of the project that agents can change: trusting jlgcli.toml does not cover it\n", p)
	}
	switch b := t.Before; {
	case b == nil:
	case b.SHA256 == t.SHA256:
		fmt.Fprintf(w, "it was trusted as it is already (since %s)\n", b.At.Local().Format(time.DateTime))
	default:
		fmt.Fprintf(w, "this replaces the trust of its content of %s (sha256 %s)\n", b.At.Local().Format(time.DateTime), b.SHA256[:12])
	}
	return nil
}

// TrustedFiles writes the files the user trusted (`jlgcli trust --list`),
// each with its state: trusted, changed (no longer trusted), gone.
func TrustedFiles(w io.Writer, record string, files []runs.TrustedFile) (err error) {
	w, end := safe(w)
	defer end(&err)
	if len(files) == 0 {
		_, err := fmt.Fprintf(w, "no file is trusted (the record: %s)\n", record)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tSHA256\tTRUSTED\tFILE")
	for _, f := range files {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.State, f.SHA256[:12], f.At.Local().Format(time.DateTime), termsafe.Line(f.Path))
	}
	return tw.Flush()
}

// Untrusted writes what `jlgcli trust --remove` did to file: removed is the
// trust it took away (nil: there was none).
func Untrusted(w io.Writer, file string, removed *trust.Entry) (err error) {
	w, end := safe(w)
	defer end(&err)
	if removed == nil {
		_, err = fmt.Fprintf(w, "%s was not trusted\n", file)
		return err
	}
	_, err = fmt.Fprintf(w, "%s is no longer trusted: its hooks and the other settings that run outside the sandbox are ignored\n", file)
	return err
}
