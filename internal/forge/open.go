package forge

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cli/go-gh/v2/pkg/auth"

	"github.com/jlgcli/jlgcli/internal/exit"
)

// Settings are the [forge] table resolved: Kind ("": chosen from the
// remote's host), URL (the forge's web address, "": from the remote) and
// TokenEnv (the NAME of the variable that holds the token; "": the
// forge's usual ones).
type Settings struct {
	Kind     Kind
	URL      string
	TokenEnv string
}

// Target is where a remote's pull requests are: the forge's kind, its
// repository, the web address the API is under, and where the token comes
// from (a variable's name, or "gh" for the gh CLI's login). It holds no
// secret and may be printed or recorded.
type Target struct {
	Kind Kind
	Repo Repo
	// Web is the forge's web root (https://github.com, or a Gitea's address
	// with its path); API the REST API's base URL, GraphQL GitHub's GraphQL
	// endpoint ("" for Gitea).
	Web, API, GraphQL string
}

// Hosts known without configuration.
const (
	githubHost   = "github.com"
	codebergHost = "codeberg.org"
)

// Resolve settles which forge serves remote (a git remote's URL: https,
// http, ssh or scp-like git@host:owner/name) under s. The kind is s.Kind,
// else github for github.com and gitea for codeberg.org; any other host
// needs forge.kind. The API is under s.URL when set (GitHub Enterprise:
// URL/api/v3 and URL/api/graphql), else under the remote's host.
func Resolve(remote string, s Settings) (Target, error) {
	r, err := parseRemote(remote)
	if err != nil {
		return Target{}, err
	}
	kind := s.Kind
	if kind == "" {
		switch strings.ToLower(r.host) {
		case githubHost:
			kind = GitHub
		case codebergHost:
			kind = Gitea
		default:
			return Target{}, exit.Usagef("set forge.kind (github or gitea) in your configuration, or JLGCLI_FORGE_KIND",
				"the remote's host %s is not a forge jlgcli knows by its name", r.host)
		}
	}
	web := r.web
	if s.URL != "" {
		u, err := url.Parse(strings.TrimSuffix(s.URL, "/"))
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return Target{}, exit.Usagef("give the forge's web address, e.g. https://gitea.example.com", "forge.url %q is not an http(s) address", s.URL)
		}
		u.User, u.RawQuery, u.Fragment = nil, "", ""
		web = u.String()
	}
	t := Target{Kind: kind, Repo: Repo{Host: hostOf(web), Owner: r.owner, Name: r.name}, Web: web}
	switch kind {
	case GitHub:
		if h := strings.ToLower(hostOf(web)); h == githubHost || h == "api."+githubHost {
			t.Web, t.API, t.GraphQL = "https://github.com", "https://api.github.com/", "https://api.github.com/graphql"
			t.Repo.Host = githubHost
		} else {
			t.API, t.GraphQL = web+"/api/v3/", web+"/api/graphql"
		}
	case Gitea:
		t.API = web + "/"
	default:
		return Target{}, exit.Usagef("", "unknown forge kind %q (known: github, gitea)", kind)
	}
	return t, nil
}

// remote is a git remote's URL read: the host, the web root it implies,
// and the repository's owner and name.
type remote struct {
	host, web, owner, name string
}

// parseRemote reads a git remote's URL. The repository is its last two
// path segments (GitHub and Gitea have no nested groups); an http(s)
// remote's web root keeps its scheme, port and the path before them (a
// Gitea served under a path), an ssh remote's is https://host.
func parseRemote(s string) (remote, error) {
	bad := func(why string) (remote, error) {
		return remote{}, exit.Usagef("push to a remote on GitHub or Gitea (its URL https://HOST/OWNER/NAME.git or git@HOST:OWNER/NAME.git)",
			"the remote %q is not on a forge: %s", redact(s), why)
	}
	var host, path, web string
	switch {
	case strings.Contains(s, "://"):
		u, err := url.Parse(s)
		if err != nil {
			return bad("not a URL")
		}
		switch u.Scheme {
		case "https", "http":
			host, path = u.Host, u.Path
		case "ssh", "git", "git+ssh", "ssh+git":
			host, path = u.Hostname(), u.Path
		default:
			return bad("its scheme is " + u.Scheme)
		}
		if host == "" {
			return bad("it has no host")
		}
		if u.Scheme == "https" || u.Scheme == "http" {
			web = u.Scheme + "://" + u.Host
		} else {
			web = "https://" + host
		}
	default:
		// scp-like: [user@]host:path, which git reads so only when no
		// slash comes before the colon.
		at := strings.Index(s, "@")
		colon := strings.Index(s, ":")
		if colon < 0 || strings.Contains(s[:colon], "/") {
			return bad("it is a path on this machine")
		}
		host, path = s[at+1:colon], s[colon+1:]
		web = "https://" + host
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) < 2 || segs[len(segs)-2] == "" || segs[len(segs)-1] == "" {
		return bad("its path does not end in OWNER/NAME")
	}
	owner, name := segs[len(segs)-2], strings.TrimSuffix(segs[len(segs)-1], ".git")
	if name == "" {
		return bad("its path does not end in OWNER/NAME")
	}
	if prefix := strings.Join(segs[:len(segs)-2], "/"); prefix != "" && strings.HasPrefix(web, "http") && strings.Contains(s, "://") {
		web += "/" + prefix
	}
	return remote{host: hostOf(web), web: web, owner: owner, name: name}, nil
}

// hostOf is the host (with its port) of an http(s) address.
func hostOf(web string) string {
	if u, err := url.Parse(web); err == nil {
		return u.Host
	}
	return ""
}

// redact is a remote's URL without the password or token it may carry.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = url.User(u.User.Username())
		return u.String()
	}
	return s
}

// Options are what Open takes besides the settings: the environment the
// token is read from, the HTTP transport under jlgcli's own (nil:
// http.DefaultTransport), the gh CLI's login (nil: go-gh's, which reads
// gh's configuration and keyring), and the rate limits' waiting.
type Options struct {
	Getenv    func(string) string
	Transport http.RoundTripper
	GHLogin   func(host string) (token, source string)
	// MaxWait is the longest wait for a rate limit to lift before the call
	// fails (0: DefaultMaxWait); OnWait is told of each wait.
	MaxWait time.Duration
	OnWait  func(d time.Duration, why string)
	// Sleep waits d or until ctx ends (nil: a timer); tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// ConflictRecheck is how long the Gitea adapter waits before it reads
	// a pull request a second time when the first read says it is not
	// mergeable (0: 2s): Gitea says the same while it is still checking.
	ConflictRecheck time.Duration
}

// DefaultMaxWait is the longest a call waits for a rate limit by default:
// GitHub's primary limit resets within the hour (and the wait adds a
// second to its reset).
const DefaultMaxWait = time.Hour + time.Minute

// Open resolves remote under s (Resolve), finds the token (Token) and
// makes the forge's adapter.
func Open(ctx context.Context, remote string, s Settings, o Options) (Forge, error) {
	t, err := Resolve(remote, s)
	if err != nil {
		return nil, err
	}
	return OpenTarget(ctx, t, s.TokenEnv, o)
}

// OpenTarget makes the adapter of a resolved target, its token read as
// Token says.
func OpenTarget(ctx context.Context, t Target, tokenEnv string, o Options) (Forge, error) {
	token, _, err := Token(t, tokenEnv, o)
	if err != nil {
		return nil, err
	}
	tr := newTransport(t, token, o)
	switch t.Kind {
	case GitHub:
		return newGitHub(t, tr)
	case Gitea:
		return newGitea(ctx, t, tr, o)
	}
	return nil, fmt.Errorf("unknown forge kind %q", t.Kind)
}

// Token finds the token of target t and says where from (a variable's
// name or "gh"). tokenEnv, when set, names the only variable read. Else
// for GitHub: GH_TOKEN, then GITHUB_TOKEN (GH_ENTERPRISE_TOKEN and
// GITHUB_ENTERPRISE_TOKEN for another host, as gh reads them), then the
// gh CLI's stored login for the host; Gitea has no usual variable and
// needs tokenEnv.
func Token(t Target, tokenEnv string, o Options) (token, source string, err error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if tokenEnv != "" {
		if v := strings.TrimSpace(getenv(tokenEnv)); v != "" {
			return v, tokenEnv, nil
		}
		return "", "", exit.Usagef("export "+tokenEnv+" with a token of "+t.Repo.Host+", or name another variable in forge.tokenEnv",
			"no token for %s: forge.tokenEnv names %s, which is not set", t.Repo.Host, tokenEnv)
	}
	if t.Kind != GitHub {
		return "", "", exit.Usagef("put a token of "+t.Repo.Host+" in a variable and name it in forge.tokenEnv (or JLGCLI_FORGE_TOKEN_ENV); the token itself never goes in a file",
			"no token for %s: forge.tokenEnv is not set", t.Repo.Host)
	}
	names := []string{"GH_TOKEN", "GITHUB_TOKEN"}
	if t.Repo.Host != githubHost && !strings.HasSuffix(t.Repo.Host, ".ghe.com") {
		names = []string{"GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}
	}
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return v, n, nil
		}
	}
	login := o.GHLogin
	if login == nil {
		login = auth.TokenForHost
	}
	if v, _ := login(t.Repo.Host); v != "" {
		return v, "gh", nil
	}
	return "", "", exit.Usagef("log in with gh auth login, or export "+names[0]+" (or name your token's variable in forge.tokenEnv)",
		"no token for %s: %s and %s are not set and gh has no login for it", t.Repo.Host, names[0], names[1])
}
