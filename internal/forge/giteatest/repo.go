package giteatest

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"

	"code.gitea.io/sdk/gitea"
)

// ProtectOptions are the rules of a protected branch.
type ProtectOptions struct {
	// RequiredContexts are the commit status contexts (globs: ci/*) that
	// must succeed at a pull request's head before it merges; none, no
	// status is required.
	RequiredContexts []string
	// RequiredApprovals is how many approvals of users with write access
	// a pull request needs.
	RequiredApprovals int
	// DismissStaleApprovals dismisses the approvals of a pull request
	// when its head moves.
	DismissStaleApprovals bool
	// BlockOnRejectedReviews refuses the merge while a reviewer with
	// write access asks for changes.
	BlockOnRejectedReviews bool
	// BlockOnOutdatedBranch refuses the merge of a head that is behind
	// its base.
	BlockOnOutdatedBranch bool
}

// Protect protects branch of r by o, through the API as the admin (who
// owns r): the rule named after the branch, made or replaced. The admin's
// own merges obey it too (no override), as jlgcli acts as the admin.
func (r Repo) Protect(ctx context.Context, branch string, o ProtectOptions) error {
	c, err := r.srv.client(ctx, r.srv.Admin)
	if err != nil {
		return err
	}
	check := len(o.RequiredContexts) > 0
	contexts := slices.Clone(o.RequiredContexts)
	approvals := int64(o.RequiredApprovals)
	_, resp, err := c.GetBranchProtection(r.Owner, r.Name, branch)
	switch {
	case err == nil:
		yes := true
		_, _, err = c.EditBranchProtection(r.Owner, r.Name, branch, gitea.EditBranchProtectionOption{EnableStatusCheck: &check,
			StatusCheckContexts: contexts, RequiredApprovals: &approvals, DismissStaleApprovals: &o.DismissStaleApprovals,
			BlockOnRejectedReviews: &o.BlockOnRejectedReviews, BlockOnOutdatedBranch: &o.BlockOnOutdatedBranch, BlockAdminMergeOverride: &yes})
	case resp != nil && resp.StatusCode == http.StatusNotFound:
		_, _, err = c.CreateBranchProtection(r.Owner, r.Name, gitea.CreateBranchProtectionOption{RuleName: branch, BranchName: branch,
			EnableStatusCheck: check, StatusCheckContexts: contexts, RequiredApprovals: approvals, DismissStaleApprovals: o.DismissStaleApprovals,
			BlockOnRejectedReviews: o.BlockOnRejectedReviews, BlockOnOutdatedBranch: o.BlockOnOutdatedBranch, BlockAdminMergeOverride: true})
	}
	if err != nil {
		return fmt.Errorf("protect %s of %s/%s: %w", branch, r.Owner, r.Name, err)
	}
	return nil
}

// Change is one commit made through the API: Files (path → content)
// written on Branch, which is made from From first when From is set.
type Change struct {
	Branch, From string
	Message      string
	Files        map[string]string
}

// Commit makes change ch as user as (who needs write access: the admin,
// CI, Reviewer), through the API's contents endpoint, as someone who
// pushes from elsewhere: the commit is the user's, on the branch on the
// server, and no checkout of the test's has it. It returns the commit's
// SHA.
func (r Repo) Commit(ctx context.Context, as User, ch Change) (string, error) {
	c, err := r.srv.client(ctx, as)
	if err != nil {
		return "", err
	}
	opt := gitea.ChangeFilesOptions{Message: ch.Message, Branch: ch.Branch}
	ref := ch.Branch
	if ch.From != "" {
		opt.Branch, opt.NewBranch, ref = ch.From, ch.Branch, ch.From
	}
	for _, path := range slices.Sorted(maps.Keys(ch.Files)) {
		op := &gitea.ChangeFileOperation{Operation: "create", Path: path, Content: base64.StdEncoding.EncodeToString([]byte(ch.Files[path]))}
		cur, resp, err := c.GetContents(r.Owner, r.Name, ref, path)
		switch {
		case err == nil:
			op.Operation, op.SHA = "update", cur.SHA
		case resp == nil || resp.StatusCode != http.StatusNotFound:
			return "", fmt.Errorf("read %s on %s: %w", path, ref, err)
		}
		opt.Files = append(opt.Files, op)
	}
	res, _, err := c.ChangeFiles(r.Owner, r.Name, opt)
	if err != nil {
		return "", fmt.Errorf("commit on %s as %s: %w", ch.Branch, as.Name, err)
	}
	if res.Commit == nil || res.Commit.SHA == "" {
		return "", fmt.Errorf("commit on %s as %s: the server named no commit", ch.Branch, as.Name)
	}
	return res.Commit.SHA, nil
}

// GitEnv is the environment that makes git authenticate to the server as
// u over HTTP: an http.extraHeader scoped to the server's address, given
// through GIT_CONFIG_COUNT (it replaces any GIT_CONFIG_COUNT/KEY/VALUE of
// the caller's), so that the token is in no remote URL and no .git/config,
// only in the environment of the gits it is given to; and no prompt.
// jlgcli's own gits keep these variables (package git drops only those
// that select another repository).
func (s *Server) GitEnv(u User) []string {
	auth := base64.StdEncoding.EncodeToString([]byte(u.Name + ":" + u.Token))
	return []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http." + s.URL + "/.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + auth,
		"GIT_TERMINAL_PROMPT=0",
	}
}

// Git runs git in dir as u: authenticated to the server by GitEnv, u's
// name and email as author and committer, no configuration of the
// machine's or the user's (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null).
// It returns git's output, trimmed.
//
// It is the git of someone else than jlgcli (a collaborator, the test
// itself), with that user's credentials, so not internal/git's (which is
// jlgcli's, pinned to its records); like it, it runs no hook and no
// fsmonitor of the repository's, whatever a checkout holds.
func (s *Server) Git(ctx context.Context, u User, dir string, args ...string) (string, error) {
	safe := []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.ext.allow=never"}
	cmd := exec.CommandContext(ctx, "git", append(safe, args...)...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "GIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, s.GitEnv(u)...)
	cmd.Env = append(cmd.Env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME="+u.Name, "GIT_AUTHOR_EMAIL="+u.Email, "GIT_COMMITTER_NAME="+u.Name, "GIT_COMMITTER_EMAIL="+u.Email)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// Clone clones r into dir (which must not exist or be empty) as u, over
// HTTP: its origin is r.URL, without credentials; pushes and fetches
// authenticate with Server.GitEnv (Server.Git gives it).
func (r Repo) Clone(ctx context.Context, u User, dir string) error {
	if r.srv == nil {
		return errNoServer
	}
	_, err := r.srv.Git(ctx, u, "", "clone", "-q", r.URL, dir)
	return err
}
