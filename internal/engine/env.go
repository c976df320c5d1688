package engine

import (
	"encoding/json"
	"strings"
)

// EnvNames are the names of an environment's KEY=VALUE entries: what a
// record keeps of the extra environment given to agents (--env, [env], a
// tier's env), whose values may be secrets such as API keys. An entry
// without '=' is a name already.
func EnvNames(env []string) []string {
	if env == nil {
		return nil
	}
	names := make([]string, len(env))
	for i, kv := range env {
		names[i], _, _ = strings.Cut(kv, "=")
	}
	return names
}

// MarshalJSON records a tier (the journal's task start) with the names of
// its environment, never their values (EnvNames).
func (t Tier) MarshalJSON() ([]byte, error) {
	type plain Tier
	p := plain(t)
	p.Env = EnvNames(t.Env)
	return json.Marshal(p)
}
