package agent

// kiloSpec drives the Kilo CLI, an agent of the opencode family:
//
//	kilo run --format json --auto [-m PROVIDER/MODEL] [--session ID]
//
// with the prompt on standard input, which "kilo run" reads to its end when
// it is not a terminal, as opencode does. --auto approves every permission
// that the configuration does not deny explicitly: unlike opencode's "run",
// which refuses what would ask, Kilo would otherwise reject edits and
// commands outside its defaults.
//
// Its JSON events are opencode's (step_start, text, tool_use, step_finish
// with tokens and cost, error), so opencode's parser reads them; its cost is
// computed by Kilo from the model's price in its configuration or catalog.
func kiloSpec() cliSpec {
	return cliSpec{
		name: "kilo",
		bin:  "kilo",
		// 7.0 is the first Kilo CLI built on opencode ("kilo run --format
		// json", --session, --auto); the 0.x/1.x CLIs were another program.
		minVersion: version{7, 0, 0},
		build: func(req Request, _ func() (string, error)) (invocation, error) {
			args := []string{"run", "--format", "json", "--auto"}
			if req.Model != "" {
				args = append(args, "-m", req.Model)
			}
			if req.SessionID != "" {
				args = append(args, "--session", req.SessionID)
			}
			return invocation{Args: args, Stdin: &req.Prompt}, nil
		},
		newParser: func() streamParser { return &opencodeParser{text: newReply()} },
		activity:  opencodeActivity,
		// No probe, as for opencode: keys come from "kilo auth", the
		// environment or the configuration (KILO_CONFIG_CONTENT, kilo.json).
	}
}
