package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/trust"
)

// needTrust are the settings that a project file gives only once the user
// trusted it as it is (jlgcli trust): each runs something, or sends
// something of the user's, outside the sandbox, on behalf of a file that an
// agent or the repository may have written. [[hooks]] run commands and call
// URLs unconfined; the embeddings service is called unconfined with the
// attempts' changes and a key read from a variable the file names; the
// Temporal server is sent the task and the user's API key or client
// certificate; the forge's address is sent the user's token, and the
// token's variable is read and sent to it. A working directory outside the file's own directory is
// where the agents write (a loop's cwd: $HOME, with its .bashrc), a
// checklist outside it a file jlgcli reads for them. set tells whether a
// layer sets the key so.
var needTrust = []trustedSetting{
	{"hooks", func(l *Layer) bool { return len(l.Hooks) > 0 }},
	{"cwd", func(l *Layer) bool { return l.Cwd != nil && outside(filepath.Dir(l.Name), *l.Cwd) }},
	{"checklist", func(l *Layer) bool { return l.Checklist != nil && outside(filepath.Dir(l.Name), *l.Checklist) }},
	{"loopDetection.embeddings", func(l *Layer) bool { return l.LoopDetection != nil && l.LoopDetection.Embeddings != nil }},
	{"temporal.address", func(l *Layer) bool { return temporalOf(l).Address != nil }},
	{"temporal.tlsCa", func(l *Layer) bool { return temporalOf(l).TLSCA != nil }},
	{"temporal.tlsCert", func(l *Layer) bool { return temporalOf(l).TLSCert != nil }},
	{"temporal.tlsKey", func(l *Layer) bool { return temporalOf(l).TLSKey != nil }},
	{"temporal.tlsServerName", func(l *Layer) bool { return temporalOf(l).TLSServerName != nil }},
	{"temporal.apiKeyEnv", func(l *Layer) bool { return temporalOf(l).APIKeyEnv != nil }},
	{"forge.url", func(l *Layer) bool { return forgeOf(l).URL != nil }},
	{"forge.tokenEnv", func(l *Layer) bool { return forgeOf(l).TokenEnv != nil }},
}

// trustedSetting is a setting that a project file gives only once trusted.
type trustedSetting struct {
	key string
	set func(*Layer) bool
}

// NeedsTrust are the keys of the settings of l that a project file gives
// only once trusted.
func (l *Layer) NeedsTrust() []string {
	var keys []string
	for _, n := range needTrust {
		if n.set(l) {
			keys = append(keys, n.key)
		}
	}
	return keys
}

// needsTrust tells whether l sets key so that it needs trust.
func needsTrust(key string, l *Layer) bool {
	return slices.ContainsFunc(needTrust, func(n trustedSetting) bool { return n.key == key && n.set(l) })
}

// outside tells whether path is outside dir, both read through their
// symbolic links (a link made in the project towards $HOME leads outside).
func outside(dir, path string) bool {
	rel, err := filepath.Rel(resolved(dir), resolved(path))
	return err != nil || rel == ".." || strings.HasPrefix(rel, "../")
}

// resolved is p (absolute) with its symbolic links followed, as far as it
// exists.
func resolved(p string) string {
	p, _ = filepath.Abs(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if parent := filepath.Dir(p); parent != p {
		return filepath.Join(resolved(parent), filepath.Base(p))
	}
	return p
}

// untrusted tells whether l's settings that need trust are ignored: a
// project file the user has not trusted as it is.
func (l *Layer) untrusted() bool { return l.Project && !l.Trusted }

// Ignored is a setting of a project file that is not trusted, and so not
// honoured: its key, the value it would have had, the file.
type Ignored struct {
	Key, Value, File string
}

// ignore records that l's key, which would have been value, is ignored.
func (c *Config) ignore(l *Layer, key, value string) {
	c.Ignored = append(c.Ignored, Ignored{Key: key, Value: value, File: l.Name})
}

// hookValue prints a hook as `jlgcli config` does.
func hookValue(h hooks.Hook) string { return h.String() + " on " + strings.Join(h.On, ",") }

// TrustFile is where the user's trust of project files is kept: trusted.json
// beside the user's file ("": nowhere, HOME and XDG_CONFIG_HOME unset).
func TrustFile(getenv func(string) string) string {
	u := UserFile(getenv)
	if u == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(u), trust.FileName)
}

// UntrustedNote says what c ignored of an untrusted project file, naming
// the file, the settings and how to trust it ("" when nothing was ignored),
// with a hint.
func (c *Config) UntrustedNote() (warning, hint string) {
	if len(c.Ignored) == 0 {
		return "", ""
	}
	file := c.Ignored[0].File
	var what []string
	hooksN := 0
	for _, i := range c.Ignored {
		if i.Key == "hooks" {
			hooksN++
		} else if !slices.Contains(what, i.Key) {
			what = append(what, i.Key)
		}
	}
	if hooksN > 0 {
		what = slices.Insert(what, 0, fmt.Sprintf("its [[hooks]] (%d)", hooksN))
	}
	warning = fmt.Sprintf("%s is not trusted: %s ignored (they would act outside the sandbox)", file, strings.Join(what, ", "))
	hint = "if you wrote it, read it and trust it as it is with: jlgcli trust " + hooks.ShellQuote(file) +
		" (a change made by an agent is never trusted by that change)"
	return warning, hint
}
