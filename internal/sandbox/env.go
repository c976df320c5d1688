package sandbox

import (
	"slices"
	"strings"

	"github.com/jlgcli/jlgcli/internal/proc"
)

// BaseEnv are the variables of jlgcli's environment that every confined
// call gets (when jlgcli has them): where things are, the locale, the
// terminal, and the toolchains' own settings. A name ending in "*" is a
// prefix. A name that looks like a secret (secretName) is left out even
// when it matches, unless passEnv names it.
var BaseEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "NO_COLOR", "CLICOLOR", "FORCE_COLOR",
	"LANG", "LANGUAGE", "LC_*", "TZ", "CI",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
	// Toolchains.
	"GO*", "CGO_*", "CC", "CXX", "AR", "PKG_CONFIG_PATH", "LD_LIBRARY_PATH",
	"NODE_PATH", "NVM_DIR", "NVM_BIN", "PNPM_HOME", "COREPACK_*",
	"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYENV_ROOT", "PYENV_VERSION", "CONDA_PREFIX", "UV_*", "POETRY_*",
	"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS",
	"JAVA_HOME", "MAVEN_OPTS", "GRADLE_USER_HOME", "GEM_HOME", "GEM_PATH", "BUNDLE_*",
}

// secretWords make a variable's name look like a secret's.
var secretWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY", "APIKEY", "API_KEY", "AUTH", "COOKIE", "SESSION"}

// secretName tells whether the variable name looks like it holds a secret
// (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, OPENAI_API_KEY, GOAUTH, ...).
func secretName(name string) bool {
	u := strings.ToUpper(name)
	if strings.HasSuffix(u, "_KEY") || strings.HasSuffix(u, "_PAT") {
		return true
	}
	for _, w := range secretWords {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// matchName tells whether name is one of patterns (a pattern ending in
// "*" is a prefix).
func matchName(patterns []string, name string) bool {
	for _, p := range patterns {
		if pre, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(name, pre) {
				return true
			}
		} else if p == name {
			return true
		}
	}
	return false
}

// allowEnv keeps of env the variables a confined call may have: BaseEnv
// (less the names that look like secrets), the call's own (need: its CLI's
// keys and settings, the names the run gives it) and what the user named
// (pass).
func allowEnv(env, pass, need []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case matchName(pass, name), matchName(need, name):
			return false
		case matchName(BaseEnv, name):
			return secretName(name)
		}
		return true
	})
}

// Trusted is env as the sandbox reads it to decide what a call may write,
// read and reach: a variable a project's file set (Config.ProjectEnv)
// has jlgcli's own value there, or none.
func (b *Box) Trusted(env []string) []string {
	return b.trusted(env)
}

func (b *Box) trusted(env []string) []string {
	return proc.Trusted(env, b.cfg.ProjectEnv)
}
