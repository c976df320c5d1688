package local

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/forge/giteatest"
	"github.com/jlgcli/jlgcli/internal/intake"
)

// The claim of batch --issues attacked on a real Gitea: two batches that
// claim the same issue at the same instant, as the same login or as two,
// and comments posing as a claim.

// issueLinkAs is a batch run's issue link on r, talking to the forge as
// user; what it warns is kept in warns.
func issueLinkAs(t *testing.T, srv *giteatest.Server, r giteatest.Repo, user giteatest.User, run string, warns *said) *issueLink {
	t.Helper()
	ctx := context.Background()
	const tv = "JLGCLI_TEST_ISSUES_TOKEN"
	st := forge.Settings{Kind: forge.Gitea, URL: srv.URL, TokenEnv: tv}
	f, err := forge.Open(ctx, r.URL, st, forge.Options{Getenv: func(k string) string {
		if k == tv {
			return user.Token
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	src := IssueSource{Query: forge.IssueQuery{Labels: []string{"agent"}}, Remote: "origin", Forge: st}
	l, err := newIssueLink(ctx, f, src, run, nil, func(format string, a ...any) { warns.Warn(fmt.Sprintf(format, a...)) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.stop(); l.wg.Wait() })
	return l
}

// statusOn are the status comments on issue n (by anyone), as "author
// run active|ended".
func statusOn(t *testing.T, r giteatest.Repo, n int) []string {
	t.Helper()
	v, err := r.IssueView(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range v.Comments {
		if run, on := intake.RunOf(c.Body); run != "" {
			state := "ended"
			if on {
				state = "active"
			}
			out = append(out, c.Author+" "+run+" "+state)
		}
	}
	return out
}

// claimRace has links a and b claim a fresh issue each round at the same
// instant (a barrier), rounds times: exactly one claim holds, the
// other's comment is gone, the issue has the claim's label, and only the
// winner's login is assigned.
func claimRace(t *testing.T, srv *giteatest.Server, r giteatest.Repo, a, b *issueLink, rounds int) {
	ctx := context.Background()
	wins := map[string]int{}
	for round := range rounds {
		n, err := r.NewIssue(ctx, srv.Outsider, fmt.Sprintf("race %d", round), "Make it so.", "agent")
		if err != nil {
			t.Fatal(err)
		}
		id := intake.IDOf(n)
		type result struct {
			li   *linkedIssue
			skip string
			err  error
		}
		var res [2]result
		var start, wg sync.WaitGroup
		start.Add(1)
		for i, l := range []*issueLink{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start.Wait()
				li, skip, err := l.claim(ctx, id, n)
				res[i] = result{li, skip, err}
			}()
		}
		start.Done()
		wg.Wait()
		var winner *issueLink
		for i, l := range []*issueLink{a, b} {
			if res[i].err != nil {
				t.Fatalf("round %d: %s: %v", round, l.run, res[i].err)
			}
			if res[i].li != nil {
				if winner != nil {
					t.Fatalf("round %d: both %s and %s hold #%d (status comments %q)", round, winner.run, l.run, n, statusOn(t, r, n))
				}
				winner = l
			} else if !strings.Contains(res[i].skip, "claimed by") {
				t.Fatalf("round %d: %s skipped #%d: %q, want claimed by the other", round, l.run, n, res[i].skip)
			}
		}
		if winner == nil {
			t.Fatalf("round %d: nobody holds #%d: %q, %q", round, n, res[0].skip, res[1].skip)
		}
		wins[winner.run]++
		want := []string{winner.self + " " + winner.run + " active"}
		if got := statusOn(t, r, n); !slices.Equal(got, want) {
			t.Fatalf("round %d: status comments of #%d: %q, want %q", round, n, got, want)
		}
		v, err := r.IssueView(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(v.Labels, intake.LabelClaimed) {
			t.Fatalf("round %d: #%d has the labels %q, not %s", round, n, v.Labels, intake.LabelClaimed)
		}
		if !slices.Equal(v.Assignees, []string{winner.self}) {
			t.Fatalf("round %d: #%d is assigned to %q, want the winner %s alone", round, n, v.Assignees, winner.self)
		}
	}
	t.Logf("claims held over %d rounds: %v", rounds, wins)
}

// Two batches of the same login claim the same issue at once.
func TestIssueClaimRaceSameLogin(t *testing.T) {
	srv := giteaSrv.Get(t)
	r := srv.NewRepo(t)
	var warns said
	a := issueLinkAs(t, srv, r, srv.Admin, "run-a", &warns)
	b := issueLinkAs(t, srv, r, srv.Admin, "run-b", &warns)
	claimRace(t, srv, r, a, b, 12)
}

// Two batches of two logins (both can push) claim the same issue at once:
// each must see the other's claim, though it is not its own login's.
func TestIssueClaimRaceOtherLogin(t *testing.T) {
	srv := giteaSrv.Get(t)
	r := srv.NewRepo(t)
	var warns said
	a := issueLinkAs(t, srv, r, srv.Admin, "run-a", &warns)
	b := issueLinkAs(t, srv, r, srv.Reviewer, "run-b", &warns)
	claimRace(t, srv, r, a, b, 12)
}

// A passer-by's comment that copies the status comment's marker, posted
// before any run claims the issue, is no claim: the issue is claimed by
// the run, and the comment is left as it is.
func TestIssueClaimForgedMarker(t *testing.T) {
	srv := giteaSrv.Get(t)
	r := srv.NewRepo(t)
	ctx := context.Background()
	var warns said
	a := issueLinkAs(t, srv, r, srv.Admin, "run-a", &warns)
	n, err := r.NewIssue(ctx, srv.Outsider, "forged", "Make it so.", "agent")
	if err != nil {
		t.Fatal(err)
	}
	forged := intake.Marker("run-0", true) + "\n**jlgcli: working on it**"
	if _, err := r.CommentIssue(ctx, srv.Outsider, n, forged); err != nil {
		t.Fatal(err)
	}
	li, skip, err := a.claim(ctx, intake.IDOf(n), n)
	if err != nil || li == nil {
		t.Fatalf("claim of #%d after a passer-by's forged marker: skip %q, %v", n, skip, err)
	}
	want := []string{giteatest.OutsiderName + " run-0 active", giteatest.AdminName + " run-a active"}
	if got := statusOn(t, r, n); !slices.Equal(got, want) {
		t.Fatalf("status comments: %q, want %q", got, want)
	}
}

// A claim let go by a writer (the label taken off) is ended by the next
// run that claims the issue, though another login made it; the new claim
// holds, and still holds when its run claims it again (resumed).
func TestIssueClaimLetGoOtherLogin(t *testing.T) {
	srv := giteaSrv.Get(t)
	r := srv.NewRepo(t)
	ctx := context.Background()
	var warns said
	b := issueLinkAs(t, srv, r, srv.Reviewer, "run-b", &warns)
	a := issueLinkAs(t, srv, r, srv.Admin, "run-a", &warns)
	n, err := r.NewIssue(ctx, srv.Outsider, "let go", "Make it so.", "agent")
	if err != nil {
		t.Fatal(err)
	}
	if li, skip, err := b.claim(ctx, intake.IDOf(n), n); err != nil || li == nil {
		t.Fatalf("first claim: %q, %v", skip, err)
	}
	if err := r.RemoveIssueLabel(ctx, srv.Admin, n, intake.LabelClaimed); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if li, skip, err := a.claim(ctx, intake.IDOf(n), n); err != nil || li == nil {
			t.Fatalf("claim after the label was taken off: %q, %v (status comments %q)", skip, err, statusOn(t, r, n))
		}
	}
	want := []string{giteatest.ReviewerName + " run-b ended", giteatest.AdminName + " run-a active"}
	if got := statusOn(t, r, n); !slices.Equal(got, want) {
		t.Fatalf("status comments: %q, want %q", got, want)
	}
}
