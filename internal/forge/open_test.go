package forge

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cli/go-gh/v2/pkg/auth"

	"github.com/jlgcli/jlgcli/internal/exit"
)

// A remote's URL, in each form git takes, says the repository and the
// forge's address; the kind comes from the settings or the host; GitHub
// Enterprise's API is under its address.
func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		remote string
		s      Settings
		want   Target
	}{
		{"https://github.com/octo/hello.git", Settings{},
			Target{Kind: GitHub, Repo: Repo{"github.com", "octo", "hello"}, Web: "https://github.com", API: "https://api.github.com/", GraphQL: "https://api.github.com/graphql"}},
		{"git@github.com:octo/hello.git", Settings{},
			Target{Kind: GitHub, Repo: Repo{"github.com", "octo", "hello"}, Web: "https://github.com", API: "https://api.github.com/", GraphQL: "https://api.github.com/graphql"}},
		{"ssh://git@github.com:22/octo/hello", Settings{},
			Target{Kind: GitHub, Repo: Repo{"github.com", "octo", "hello"}, Web: "https://github.com", API: "https://api.github.com/", GraphQL: "https://api.github.com/graphql"}},
		{"https://x-access-token:ghs_secret@github.com/octo/hello", Settings{},
			Target{Kind: GitHub, Repo: Repo{"github.com", "octo", "hello"}, Web: "https://github.com", API: "https://api.github.com/", GraphQL: "https://api.github.com/graphql"}},
		{"https://codeberg.org/forgejo/forgejo.git", Settings{},
			Target{Kind: Gitea, Repo: Repo{"codeberg.org", "forgejo", "forgejo"}, Web: "https://codeberg.org", API: "https://codeberg.org/"}},
		{"http://127.0.0.1:3000/jlg/r1.git", Settings{Kind: Gitea},
			Target{Kind: Gitea, Repo: Repo{"127.0.0.1:3000", "jlg", "r1"}, Web: "http://127.0.0.1:3000", API: "http://127.0.0.1:3000/"}},
		{"https://example.com/gitea/team/app.git", Settings{Kind: Gitea},
			Target{Kind: Gitea, Repo: Repo{"example.com", "team", "app"}, Web: "https://example.com/gitea", API: "https://example.com/gitea/"}},
		{"git@git.example.com:team/app.git", Settings{Kind: Gitea, URL: "https://example.com/gitea/"},
			Target{Kind: Gitea, Repo: Repo{"example.com", "team", "app"}, Web: "https://example.com/gitea", API: "https://example.com/gitea/"}},
		{"git@ghe.corp:team/app.git", Settings{Kind: GitHub},
			Target{Kind: GitHub, Repo: Repo{"ghe.corp", "team", "app"}, Web: "https://ghe.corp", API: "https://ghe.corp/api/v3/", GraphQL: "https://ghe.corp/api/graphql"}},
	} {
		got, err := Resolve(tc.remote, tc.s)
		if err != nil {
			t.Errorf("%s: %v", tc.remote, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.remote, got, tc.want)
		}
	}
	for _, tc := range []struct {
		remote string
		s      Settings
		msg    string
	}{
		{"https://git.example.com/team/app.git", Settings{}, "not a forge jlgcli knows"},
		{"/srv/git/app.git", Settings{}, "a path on this machine"},
		{"file:///srv/git/app.git", Settings{}, "its scheme is file"},
		{"https://github.com/octo", Settings{}, "does not end in OWNER/NAME"},
		{"https://user:tok_secret@git.example.com/app", Settings{Kind: Gitea}, "does not end in OWNER/NAME"},
		{"https://github.com/octo/hello", Settings{URL: "ftp://x"}, "not an http(s) address"},
	} {
		_, err := Resolve(tc.remote, tc.s)
		if err == nil || !strings.Contains(err.Error(), tc.msg) || !exit.IsUsage(err) {
			t.Errorf("%s: %v, want a usage error saying %q", tc.remote, err, tc.msg)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows the token: %v", tc.remote, err)
		}
	}
}

// The token: the variable tokenEnv names, else GitHub's usual variables
// for the host, else gh's login; a missing one is a usage error naming
// what to set, never showing a value.
func TestToken(t *testing.T) {
	gh, err := Resolve("https://github.com/o/r", Settings{})
	if err != nil {
		t.Fatal(err)
	}
	ghe, err := Resolve("https://ghe.corp/o/r", Settings{Kind: GitHub})
	if err != nil {
		t.Fatal(err)
	}
	gt, err := Resolve("https://codeberg.org/o/r", Settings{})
	if err != nil {
		t.Fatal(err)
	}
	envOf := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	noLogin := func(string) (string, string) { return "", "default" }
	for _, tc := range []struct {
		name     string
		t        Target
		tokenEnv string
		env      map[string]string
		login    func(string) (string, string)
		token    string
		source   string
		msg      string
	}{
		{"GH_TOKEN first", gh, "", map[string]string{"GH_TOKEN": "a", "GITHUB_TOKEN": "b"}, noLogin, "a", "GH_TOKEN", ""},
		{"GITHUB_TOKEN", gh, "", map[string]string{"GITHUB_TOKEN": "b"}, noLogin, "b", "GITHUB_TOKEN", ""},
		{"tokenEnv only", gh, "MY_TOKEN", map[string]string{"GH_TOKEN": "a", "MY_TOKEN": " m\n"}, noLogin, "m", "MY_TOKEN", ""},
		{"tokenEnv unset", gh, "MY_TOKEN", map[string]string{"GH_TOKEN": "a"}, noLogin, "", "", "forge.tokenEnv names MY_TOKEN, which is not set"},
		{"enterprise", ghe, "", map[string]string{"GH_TOKEN": "a", "GITHUB_ENTERPRISE_TOKEN": "e"}, noLogin, "e", "GITHUB_ENTERPRISE_TOKEN", ""},
		{"gh login", gh, "", nil, func(h string) (string, string) { return "from-gh-" + h, "oauth_token" }, "from-gh-github.com", "gh", ""},
		{"none", gh, "", nil, noLogin, "", "", "GH_TOKEN and GITHUB_TOKEN are not set and gh has no login"},
		{"gitea needs tokenEnv", gt, "", map[string]string{"GH_TOKEN": "a"}, noLogin, "", "", "forge.tokenEnv is not set"},
		{"gitea", gt, "CB_TOKEN", map[string]string{"CB_TOKEN": "c"}, noLogin, "c", "CB_TOKEN", ""},
	} {
		tok, src, err := Token(tc.t, tc.tokenEnv, Options{Getenv: envOf(tc.env), GHLogin: tc.login})
		if tc.msg != "" {
			if err == nil || !strings.Contains(err.Error(), tc.msg) || !exit.IsUsage(err) || exit.HintOf(err) == "" {
				t.Errorf("%s: %v (hint %q), want a usage error saying %q", tc.name, err, exit.HintOf(err), tc.msg)
			}
			continue
		}
		if err != nil || tok != tc.token || src != tc.source {
			t.Errorf("%s: %q from %q, %v; want %q from %q", tc.name, tok, src, err, tc.token, tc.source)
		}
	}
}

// With no token in the environment, GitHub's token is the gh CLI's stored
// login, read by go-gh from gh's hosts.yml.
func TestTokenFromGHConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hosts.yml"), []byte("github.com:\n    user: octo\n    oauth_token: gho_stored\n    git_protocol: https\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GH_CONFIG_DIR", dir)
	t.Setenv("GH_TOKEN", "")
	t.Setenv("GITHUB_TOKEN", "")
	gh, err := Resolve("https://github.com/o/r", Settings{})
	if err != nil {
		t.Fatal(err)
	}
	tok, src, err := Token(gh, "", Options{Getenv: func(string) string { return "" }, GHLogin: auth.TokenFromEnvOrConfig})
	if err != nil || tok != "gho_stored" || src != "gh" {
		t.Errorf("token %q from %q, %v; want gho_stored from gh", tok, src, err)
	}
}

func TestParseKindAndMethod(t *testing.T) {
	for _, s := range []string{"", "github", "gitea"} {
		if k, err := ParseKind(s); err != nil || string(k) != s {
			t.Errorf("ParseKind(%q) = %q, %v", s, k, err)
		}
	}
	if _, err := ParseKind("gitlab"); err == nil {
		t.Error("ParseKind(gitlab) accepted")
	}
	for _, s := range []string{"merge", "squash", "rebase"} {
		if m, err := ParseMergeMethod(s); err != nil || string(m) != s {
			t.Errorf("ParseMergeMethod(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := ParseMergeMethod("fast-forward"); err == nil || errors.Is(err, ErrUnsupported) {
		t.Errorf("ParseMergeMethod(fast-forward): %v", err)
	}
}
