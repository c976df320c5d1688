package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/serve"
)

// serveOptions are the inputs of `serve`.
type serveOptions struct {
	storeFlags
	addr  string
	token string
}

func newServeCmd(stdio *Stdio) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Watch and steer the runs in a browser: a live web board over the state directory",
		Long: strings.TrimSpace(`
Serve a web board of the runs kept here (the state directory 'jlgcli runs' reads) on
--addr, loopback by default: every run with its status, tier and attempt, cost and
duration; a batch as a board, a dependency graph and a timeline; a task's attempts with
the prompt sent, the agent's reply, the gate's verdict and the change as a diff; the agent's
output as it is written. Pages update as the runs' journals are written, with no reload;
Stop and Resume act on a run. The same server answers a JSON API mirroring --json:
GET /api/runs, GET /api/runs/ID, GET /api/runs/ID/events (server-sent events; Last-Event-ID
resumes), POST /api/runs/ID/stop, POST /api/runs/ID/resume.

An address that is not loopback needs a token (--token or JLGCLI_SERVE_TOKEN) that every
request must carry: 'Authorization: Bearer TOKEN', or a browser gives it once at /login.
Ctrl-C stops the server; the runs go on.`),
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringVar(&o.stateDir, "state-dir", "", "where runs are kept (default: .jlgcli at the repository root, else $XDG_STATE_HOME/jlgcli)")
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:8421", "HOST:PORT to listen on (port 0: any free one)")
	cmd.Flags().StringVar(&o.token, "token", "", "the token every request must carry (default: $JLGCLI_SERVE_TOKEN); needed off loopback")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		token, err := serve.Token(o.addr, o.token, stdio.Env)
		if err != nil {
			return err
		}
		root, err := o.root(stdio)
		if err != nil {
			return err
		}
		src := &serve.Runtime{Root: root, Connect: stdio.Connect(flagLayer()), Env: stdio.Environ}
		return serve.ListenAndServe(cmd.Context(), o.addr, src, serve.Options{Token: token}, stdio.Reporter().Notice)
	}
	return cmd
}
