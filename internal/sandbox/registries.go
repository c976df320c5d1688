package sandbox

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Registries are the package registries a check reaches through the
// proxy, by the files that say a project's language (looked for in the
// check's directory and its parents up to the repository's top).
var Registries = []struct {
	Files []string
	Hosts []string
}{
	{[]string{"go.mod", "go.work"}, []string{"proxy.golang.org", "sum.golang.org"}},
	{[]string{"package.json"}, []string{"registry.npmjs.org", "registry.yarnpkg.com"}},
	{[]string{"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile"}, []string{"pypi.org", "files.pythonhosted.org"}},
	{[]string{"Cargo.toml"}, []string{"crates.io", "index.crates.io", "static.crates.io"}},
	{[]string{"pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"},
		[]string{"repo.maven.apache.org", "repo1.maven.org", "plugins.gradle.org", "services.gradle.org", "downloads.gradle.org"}},
	{[]string{"Gemfile"}, []string{"rubygems.org", "index.rubygems.org"}},
}

// registries are the hosts a check in dir reaches: the registries of its
// project's languages, the proxies and registries the user's environment
// names (GOPROXY, npm_config_registry, PIP_INDEX_URL, ...), and
// allowHosts (added by listen).
func registries(dir string, env []string) []string {
	var hosts []string
	seen := map[int]bool{}
	for d := dir; ; d = filepath.Dir(d) {
		for i, r := range Registries {
			for _, f := range r.Files {
				if !seen[i] && exists(filepath.Join(d, f)) {
					seen[i] = true
					hosts = append(hosts, r.Hosts...)
				}
			}
		}
		if exists(filepath.Join(d, ".git")) || filepath.Dir(d) == d {
			break
		}
	}
	for _, k := range []string{"GOPROXY", "npm_config_registry", "NPM_CONFIG_REGISTRY", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL"} {
		for _, u := range strings.FieldsFunc(lookup(env, k), func(r rune) bool { return r == ',' || r == '|' || r == ' ' }) {
			if p, err := url.Parse(u); err == nil && (p.Scheme == "https" || p.Scheme == "http") && p.Host != "" {
				hosts = append(hosts, p.Scheme+"://"+p.Host)
			}
		}
	}
	return hosts
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
