package intake

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jlgcli/jlgcli/internal/forge"
)

// Claim is what jlgcli did to claim an issue: Self is its login on the
// forge, Assigned whether the forge let it assign itself.
type Claim struct {
	Self     string `json:"self,omitempty"`
	Assigned bool   `json:"assigned,omitempty"`
}

// StopReason says why the tracker asks the task of issue i, claimed as c
// and selected by q, to stop ("" when it does not): the issue was closed,
// the claim's label or one the query needs was taken off, it left the
// query's assignee or milestone, or jlgcli was unassigned.
func StopReason(q forge.IssueQuery, c Claim, i forge.Issue) string {
	switch {
	case i.State != forge.IssueOpen:
		return fmt.Sprintf("issue #%d was closed", i.Number)
	case !slices.Contains(i.Labels, LabelClaimed):
		return fmt.Sprintf("the label %s was taken off issue #%d", LabelClaimed, i.Number)
	case c.Assigned && c.Self != "" && !slices.Contains(i.Assignees, c.Self):
		return fmt.Sprintf("%s was unassigned from issue #%d", c.Self, i.Number)
	}
	for _, l := range q.Labels {
		if !slices.ContainsFunc(i.Labels, func(h string) bool { return strings.EqualFold(h, l) }) {
			return fmt.Sprintf("the label %s was taken off issue #%d", l, i.Number)
		}
	}
	if !Holds(q, i) {
		return fmt.Sprintf("issue #%d no longer matches %s", i.Number, QueryString(q))
	}
	return ""
}

// Claims are the claims that the status comments cs of an issue (oldest
// first) hold, oldest first, one a run: those whose marker says active,
// posted by self (jlgcli's login) or by someone who can push — another
// jlgcli's login, which must see this one's claims as this one sees its
// own. A passer-by's comment that copies the marker is no claim: it
// could not have put the claim's label on either.
func Claims(cs []forge.Comment, self string) []forge.Comment {
	var out []forge.Comment
	for _, c := range cs {
		run, on := RunOf(c.Body)
		if run == "" || c.Author != self && !c.Permission.CanWrite() {
			continue
		}
		if on && !slices.ContainsFunc(out, func(o forge.Comment) bool { r, _ := RunOf(o.Body); return r == run }) {
			out = append(out, c)
		}
	}
	return out
}

// Runs are the runs of claims, in order.
func Runs(claims []forge.Comment) []string {
	out := make([]string, 0, len(claims))
	for _, c := range claims {
		r, _ := RunOf(c.Body)
		out = append(out, r)
	}
	return out
}

// Claimant says who holds issue i when jlgcli run is about to claim it or
// has just claimed it ("" when it is run): the issue is claimed while it
// has the claim label; then the run of the oldest active status comment
// of jlgcli's holds it (active: those runs, oldest first), else a person
// put the label there. Two runs that claim at once both post their
// comment, and both read that the older one holds it.
func Claimant(i forge.Issue, run string, active []string) string {
	if !slices.Contains(i.Labels, LabelClaimed) {
		return ""
	}
	if len(active) == 0 {
		return "someone (it has the label " + LabelClaimed + ")"
	}
	if active[0] == run {
		return ""
	}
	return "jlgcli run " + active[0]
}
