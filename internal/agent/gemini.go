package agent

// PLACEHOLDER: replaced by the real adapter.
func geminiSpec() cliSpec {
	return cliSpec{name: "gemini", bin: "gemini", minVersion: version{0, 0, 1},
		build: func(req Request, _ func() (string, error)) (invocation, error) { return invocation{Args: []string{req.Prompt}}, nil },
		newParser: func() streamParser { return &plainParser{text: nil} }}
}
