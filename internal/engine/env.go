package engine

import "strings"

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
