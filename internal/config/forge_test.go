package config

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/forge"
)

// The [forge] table reads from a file, the environment and flags, each
// over the last; its kind and address are checked, and its tokenEnv is a
// variable's name, never a token, which no error quotes.
func TestForgeKeys(t *testing.T) {
	dir := t.TempDir()
	p := write(t, filepath.Join(dir, "user.toml"), "[forge]\nkind = \"gitea\"\nurl = \"https://git.example.com/\"\ntokenEnv = \"GITEA_TOKEN\"\n")
	file, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Resolve(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := (forge.Settings{Kind: forge.Gitea, URL: "https://git.example.com", TokenEnv: "GITEA_TOKEN"}); c.Forge != want {
		t.Errorf("from the file: %+v, want %+v", c.Forge, want)
	}
	e, err := EnvLayer(env(map[string]string{"JLGCLI_FORGE_URL": "http://127.0.0.1:3000", "JLGCLI_FORGE_TOKEN_ENV": "CI_GITEA"}))
	if err != nil {
		t.Fatal(err)
	}
	flags := &Layer{Name: "flag"}
	for _, k := range Table() {
		if k.Flag == "forge-kind" {
			if err := k.Parse(flags, "github"); err != nil {
				t.Fatal(err)
			}
		}
	}
	c, err = Resolve(file, e, flags)
	if err != nil {
		t.Fatal(err)
	}
	if want := (forge.Settings{Kind: forge.GitHub, URL: "http://127.0.0.1:3000", TokenEnv: "CI_GITEA"}); c.Forge != want {
		t.Errorf("over the environment and flags: %+v, want %+v", c.Forge, want)
	}
	for key, src := range map[string]string{"forge.kind": "flag", "forge.url": "environment", "forge.tokenEnv": "environment"} {
		if c.Sources[key] != src {
			t.Errorf("%s from %q, want %q", key, c.Sources[key], src)
		}
	}
	d, err := Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if d.Forge != (forge.Settings{}) || d.Value("forge.kind") != "(from the remote's host)" {
		t.Errorf("defaults: %+v, kind prints %q", d.Forge, d.Value("forge.kind"))
	}

	for _, tc := range []struct{ key, value, msg string }{
		{"forge.kind", "gitlab", `unknown forge kind "gitlab"`},
		{"forge.url", "git.example.com", "not an http(s) address"},
		{"forge.url", "https://me:ghp_secret123@github.example.com", "has a user or a token in it"},
		{"forge.tokenEnv", "ghp_secret123.abc", "not an environment variable name"},
	} {
		v := tc.value
		l := &Layer{Name: "flag", Forge: &ForgeLayer{}}
		switch tc.key {
		case "forge.kind":
			l.Forge.Kind = &v
		case "forge.url":
			l.Forge.URL = &v
		case "forge.tokenEnv":
			l.Forge.TokenEnv = &v
		}
		_, err := Resolve(l)
		var cerr *Error
		if !errors.As(err, &cerr) || cerr.Key != tc.key || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s = %q: %v, want an error of the key saying %q", tc.key, v, err, tc.msg)
		}
		if strings.Contains(err.Error(), "secret123") {
			t.Errorf("%s: the error quotes the secret: %v", tc.key, err)
		}
	}
	if _, err := EnvLayer(env(map[string]string{"JLGCLI_FORGE_KIND": "svn"})); err == nil || !strings.Contains(err.Error(), "JLGCLI_FORGE_KIND") {
		t.Errorf("JLGCLI_FORGE_KIND=svn: %v", err)
	}
	_, err = LoadFile(write(t, filepath.Join(dir, "bad.toml"), "[forge]\ntoken = \"x\"\n"))
	if err == nil || !strings.Contains(err.Error(), "forge has: kind, url, tokenEnv") {
		t.Errorf("an unknown key of [forge]: %v", err)
	}
}

// A project file's forge address and token variable are honoured only
// once trusted: the user's token would be read from a variable the file
// names and sent to an address it names. Its kind needs no trust.
func TestForgeNeedsTrust(t *testing.T) {
	dir := t.TempDir()
	path := write(t, filepath.Join(dir, ProjectFile), "[forge]\nkind = \"gitea\"\nurl = \"https://evil.example\"\ntokenEnv = \"AWS_SECRET_ACCESS_KEY\"\n")
	pl, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pl.NeedsTrust(), []string{"forge.url", "forge.tokenEnv"}; !slices.Equal(got, want) {
		t.Errorf("NeedsTrust = %v, want %v", got, want)
	}
	pl.Project = true
	c, err := Resolve(pl)
	if err != nil {
		t.Fatal(err)
	}
	if want := (forge.Settings{Kind: forge.Gitea}); c.Forge != want {
		t.Errorf("untrusted: %+v, want %+v", c.Forge, want)
	}
	var ignored []string
	for _, i := range c.Ignored {
		ignored = append(ignored, i.Key+"="+i.Value)
	}
	if want := []string{"forge.url=https://evil.example", "forge.tokenEnv=AWS_SECRET_ACCESS_KEY"}; !slices.Equal(ignored, want) {
		t.Errorf("ignored %v, want %v", ignored, want)
	}
	pl.Trusted = true
	c, err = Resolve(pl)
	if err != nil {
		t.Fatal(err)
	}
	if want := (forge.Settings{Kind: forge.Gitea, URL: "https://evil.example", TokenEnv: "AWS_SECRET_ACCESS_KEY"}); c.Forge != want {
		t.Errorf("trusted: %+v, want %+v", c.Forge, want)
	}
}
