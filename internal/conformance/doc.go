// Package conformance holds the conformance tests of jlgcli against the real
// agent CLIs: claude, codex, gemini, opencode, qwen, kilo, and copilot in its
// BYOK mode (a custom provider). It has no code of its own, only tests.
//
// Each test calls jlgcli in-process (cli.Main) exactly as a user would run it
// — `jlgcli run --json -b claude PROMPT`, `jlgcli loop --json -b codex --cwd
// DIR ...` — with the real CLI installed, in the isolated environment of
// modelserver.AgentEnv (its own HOME, XDG directories and configuration
// files, the CLI's directory first on PATH), against a modelserver.Server
// playing a script. It asserts what the user sees: the exit code, the fields
// of the result object, the files the agent wrote, and what the model server
// received. For every CLI:
//
//   - run: the scripted text, the session id, the token counts and the cost
//     where the CLI reports them;
//   - loop: three iterations in which the model writes a file with the CLI's
//     own tool; the file is in --cwd and the loop ends done on the marker;
//   - json completion: the next prompt of a "continue" object is the prompt
//     of the second model request;
//   - no key, and a key the server rejects (401): exit 6;
//   - 429: exit 69, with the reset time where the CLI reports one;
//   - a rate limit that lifts: the loop waits (a rate-limit-wait in its
//     journal, no iteration spent) and ends done;
//   - 500: status error, never done;
//   - a --timeout shorter than a slow answer: exit 75 soon after the limit,
//     and no process of the CLI left running;
//   - --session continue: the second iteration resumes the CLI's own
//     session, so the model is sent the first exchange again.
//
// TestTaskClaudeEscalate (task_test.go) runs `jlgcli task` on a git
// repository with two claude tiers of different models: the first loops (the
// same diff twice) and escalates, the second passes the check, and the work
// is squash-merged into main. TestTaskClaudeGoSameError (task_go_test.go)
// runs it on a Go module with the detected default gate (go test -json):
// three different wrong versions of the code failing one test the same way
// must fire the rule same-error and escalate.
//
// Every run is tagged with a unique JLGCLI_CONFORMANCE_TAG in the agent's
// environment; after it, no process carrying the tag may be left.
//
// The CLIs are looked up by modelserver.FindAgent: $JLGCLI_CONFORMANCE_DIR,
// else <repo>/.cache/agents/node_modules/.bin (`make agents`), else PATH. A
// missing CLI skips its tests with a message saying so; with
// JLGCLI_REQUIRE_AGENTS=1 (set by .ci/run) it fails them. -short skips them
// all, unless JLGCLI_REQUIRE_AGENTS=1. `go test -run TestConformance/codex/`
// runs one CLI, `-run TestConformance/codex/loop-write` one case. At most
// JLGCLI_CONFORMANCE_PARALLEL (default 3) CLI runs go at once.
package conformance
