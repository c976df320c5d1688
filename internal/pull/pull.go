// Package pull decides what the pull-request loop does next: given what
// the forge says of a pull request now (an Observation) and what the loop
// remembers of its earlier rounds (Memory), Decide says wait, re-run a
// failed check, make an attempt with what blocks the target as its
// feedback, merge, done or give up — and what to remember of it.
//
// It talks to nothing and reads no clock: the local runner and a Temporal
// workflow run the same rules on the same journaled values (internal/local
// watches a pull request here; the forge layer, internal/forge, reads and
// writes the forge). The rules, in the words of the README:
//
//   - green: every required check (every reported check when the base
//     names none) succeeded at the pull request's current head, checks
//     having had Policy.Grace to appear (no check is not green); no
//     unresolved review thread begun by an author with write access (or
//     listed in Policy.Trusted); not conflicting with its base.
//   - approved: green, and the review decision approved or none required
//     (only writers' verdicts count); a request for changes is feedback
//     when its author may push or is trusted, as a thread's.
//   - merged: approved, then merged by Policy.Method.
//   - A condition that blocks the target is acted on once per head commit;
//     a failed check is re-run once per head before an agent is woken; the
//     loop's own comments (Policy.Self) are never feedback.
package pull

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/plural"
)

// Target is the state a pull request is worked until.
type Target string

// The targets, each implying the ones before it.
const (
	Green    Target = "green"
	Approved Target = "approved"
	Merged   Target = "merged"
)

// Targets are the targets, in the order help lists them.
var Targets = []Target{Green, Approved, Merged}

// ParseTarget reads a target's name.
func ParseTarget(s string) (Target, error) {
	switch t := Target(s); t {
	case Green, Approved, Merged:
		return t, nil
	}
	return "", fmt.Errorf("unknown target %q (known: green, approved, merged)", s)
}

// The defaults of a Policy's zero fields.
const (
	DefaultGrace     = 10 * time.Minute
	DefaultPoll      = 15 * time.Second
	DefaultMaxPoll   = 5 * time.Minute
	DefaultMaxRounds = 10
	// MaxMergeTries is how many times a merge the forge refuses is asked
	// again at one head (branch protection may lag a status by seconds).
	MaxMergeTries = 3
)

// Policy is what the decisions depend on besides the forge's state.
type Policy struct {
	Target Target `json:"target"`
	// Self is the loop's own login on the forge: its comments are never
	// read as feedback.
	Self string `json:"self,omitempty"`
	// Trusted are authors whose threads block the target though they
	// cannot push (the configuration's list).
	Trusted []string `json:"trusted,omitempty"`
	// Grace is how long checks have to appear at a new head before their
	// absence gives up.
	Grace millis.Duration `json:"graceMs,omitempty"`
	// Poll is the first wait between two looks; each look that finds
	// nothing changed doubles it, up to MaxPoll.
	Poll    millis.Duration `json:"pollMs,omitempty"`
	MaxPoll millis.Duration `json:"maxPollMs,omitempty"`
	// MaxRounds bounds the attempts made for the pull request.
	MaxRounds int `json:"maxRounds,omitempty"`
	// GiveUpAfter, when not 0, is how long the loop waits with nothing
	// new on the pull request (no new head, check state, review or word)
	// before it gives up: a wait is never longer than what is left of it.
	GiveUpAfter millis.Duration `json:"giveUpAfterMs,omitempty"`
	// AnyWord keeps, for a workflow whose history was made before
	// 2026-11-28 (never otherwise), the rule of then: every word of a
	// writer's thread but the loop's counted, a passer-by's too, and the
	// look's fingerprint counted every comment and review.
	AnyWord bool `json:"-"`
	// Method is how the target merged merges ("": the forge's merge).
	Method forge.MergeMethod `json:"method,omitempty"`
}

// WithDefaults is p with its zero fields set to the defaults.
func (p Policy) WithDefaults() Policy {
	if p.Grace <= 0 {
		p.Grace = millis.Of(DefaultGrace)
	}
	if p.Poll <= 0 {
		p.Poll = millis.Of(DefaultPoll)
	}
	if p.MaxPoll < p.Poll {
		p.MaxPoll = max(millis.Of(DefaultMaxPoll), p.Poll)
	}
	if p.MaxRounds <= 0 {
		p.MaxRounds = DefaultMaxRounds
	}
	if p.Method == "" {
		p.Method = forge.MethodMerge
	}
	return p
}

// Observation is what the forge says of the pull request at one look:
// the pull request, the checks at its head, its reviews and its threads.
type Observation struct {
	At      time.Time      `json:"at"`
	PR      forge.PR       `json:"pr"`
	Checks  forge.Checks   `json:"checks"`
	Reviews forge.Reviews  `json:"reviews"`
	Threads []forge.Thread `json:"threads,omitempty"`
}

// Memory is what the loop keeps of its earlier looks and rounds, journaled
// with each decision so that a resumed loop decides as the killed one would
// have.
type Memory struct {
	// Pushed is the last head the loop pushed: the lease of its next push.
	Pushed string `json:"pushed,omitempty"`
	// Head is the head seen at the last look, and HeadSince when it was
	// first seen (the checks' grace counts from there).
	Head      string    `json:"head,omitempty"`
	HeadSince time.Time `json:"headSince"`
	// Done are the keys of what was done: at a head ("SHA rerun:NAME",
	// "SHA check:NAME", "SHA conflict:BASESHA", "SHA merge"), on a thread
	// ("thread:ID:COMMENT", its last comment not the loop's), on a review
	// ("review:ID"). Each is done once, a merge MaxMergeTries times.
	Done []string `json:"done,omitempty"`
	// Rounds is how many attempts were made.
	Rounds int `json:"rounds"`
	// Failures is what the checks that the last round was woken for said
	// (their names, states and descriptions), and Same how many rounds in
	// a row before the next were woken for the same: the same-error rule
	// across rounds.
	Failures string `json:"failures,omitempty"`
	Same     int    `json:"same,omitempty"`
	// Seen is what the last look found, in short; Quiet how many looks in a
	// row found the same (the wait doubles with each), and SeenSince when
	// a look first found it, or first after a round (Policy.GiveUpAfter
	// counts from there).
	Seen      string    `json:"seen,omitempty"`
	Quiet     int       `json:"quiet,omitempty"`
	SeenSince time.Time `json:"seenSince,omitzero"`
}

func (m Memory) count(key string) int {
	n := 0
	for _, k := range m.Done {
		if k == key {
			n++
		}
	}
	return n
}

// Do is what the loop does next.
type Do string

// The actions.
const (
	// Wait looks again after Action.After.
	Wait Do = "wait"
	// Rerun asks the forge to run Action.Checks again.
	Rerun Do = "rerun"
	// Attempt wakes an agent with Action.Blockers as its feedback.
	Attempt Do = "attempt"
	// Merge merges the pull request at Action.Head.
	Merge Do = "merge"
	// Done: the target is reached.
	Done Do = "done"
	// GiveUp: the target cannot be reached without a person; Action.Reason
	// says why.
	GiveUp Do = "give-up"
)

// Action is one decision.
type Action struct {
	Do Do `json:"do"`
	// Head is the pull request's head the decision was made at.
	Head string `json:"head,omitempty"`
	// After is how long to wait (Wait).
	After millis.Duration `json:"afterMs,omitempty"`
	// Checks are the failed checks to re-run (Rerun).
	Checks []forge.Check `json:"checks,omitempty"`
	// Blockers are what the attempt is to address (Attempt), or what is
	// left blocking (GiveUp).
	Blockers []Blocker `json:"blockers,omitempty"`
	// Waiting says, in words, what a Wait waits for.
	Waiting []string `json:"waiting,omitempty"`
	// Reason says, in words, why Done or GiveUp.
	Reason string `json:"reason,omitempty"`
}

// Kind is what blocks a target.
type Kind string

// The kinds of blocker.
const (
	FailedCheck      Kind = "check"
	OpenThread       Kind = "thread"
	Conflict         Kind = "conflict"
	ChangesRequested Kind = "changes-requested"
)

// Blocker is one condition that keeps the pull request from its target.
type Blocker struct {
	Kind   Kind          `json:"kind"`
	Check  *forge.Check  `json:"check,omitempty"`
	Thread *forge.Thread `json:"thread,omitempty"`
	Review *forge.Review `json:"review,omitempty"`
	// Base and BaseSHA are the branch a conflict is with and its commit.
	Base    string `json:"base,omitempty"`
	BaseSHA string `json:"baseSha,omitempty"`
}

// Key names the blocker among those of one head: a thread's key changes
// with each new comment of someone else's, so that a new word on a thread
// is acted on again.
func (b Blocker) Key() string {
	switch {
	case b.Check != nil:
		return "check:" + b.Check.Name
	case b.Thread != nil:
		last := int64(0)
		if len(b.Thread.Comments) > 0 {
			last = b.Thread.Comments[len(b.Thread.Comments)-1].ID
		}
		return "thread:" + b.Thread.ID + ":" + strconv.FormatInt(last, 10)
	case b.Review != nil:
		return "review:" + strconv.FormatInt(b.Review.ID, 10)
	}
	return string(b.Kind) + ":" + b.BaseSHA
}

// String says the blocker in a few words.
func (b Blocker) String() string {
	switch {
	case b.Check != nil:
		s := fmt.Sprintf("check %q %s", b.Check.Name, checkWord(b.Check))
		if d := oneLine(b.Check.Description, 80); d != "" {
			s += ": " + d
		}
		return s
	case b.Thread != nil:
		who := ""
		if len(b.Thread.Comments) > 0 {
			who = " by " + b.Thread.Comments[0].Author
		}
		return fmt.Sprintf("review thread on %s%s", where(*b.Thread), who)
	case b.Review != nil:
		return fmt.Sprintf("%s asked for changes", b.Review.Author)
	}
	return fmt.Sprintf("conflicts with %s", b.Base)
}

func checkWord(c *forge.Check) string {
	if c.Conclusion != "" && c.Conclusion != string(forge.Failed) {
		return "failed (" + c.Conclusion + ")"
	}
	return "failed"
}

func where(t forge.Thread) string {
	switch {
	case t.Line > 0:
		return fmt.Sprintf("%s:%d", t.Path, t.Line)
	case t.OldLine > 0:
		return fmt.Sprintf("%s:%d (old side)", t.Path, t.OldLine)
	}
	return t.Path
}

// doneKey is the key of Memory.Done that says b was acted on: a failed
// check or a conflict once per head, a thread once per word of someone
// else's, a review asking for changes once.
func doneKey(head string, b Blocker) string {
	if b.Kind == OpenThread || b.Kind == ChangesRequested {
		return b.Key()
	}
	return head + " " + b.Key()
}

// Decide is what to do after the look o, with the loop's memory m, and the
// memory to journal with it.
func Decide(p Policy, o Observation, m Memory) (Action, Memory) {
	p = p.WithDefaults()
	m.Done = slices.Clone(m.Done)
	head := o.PR.HeadSHA
	if head != m.Head {
		m.Head, m.HeadSince = head, o.At
	}
	act := Action{Head: head}
	switch o.PR.State {
	case forge.StateMerged:
		act.Do, act.Reason = Done, "merged"
		if o.PR.MergeSHA != "" {
			act.Reason += " as " + short(o.PR.MergeSHA)
		}
		return act, m
	case forge.StateClosed:
		act.Do, act.Reason = GiveUp, "the pull request was closed without being merged"
		return act, m
	}
	age := o.At.Sub(m.HeadSince)
	at := func(key string) string { return head + " " + key }

	var waiting []string
	var blockers []Blocker
	var rerun []forge.Check
	var lost string // why waiting more cannot help

	// The checks at the head.
	names, byName := checkNames(o.Checks)
	switch {
	case o.Checks.SHA != "" && o.Checks.SHA != head:
		waiting = append(waiting, "the checks of the new head "+short(head))
	case len(names) == 0 && age < p.Grace.Duration():
		waiting = append(waiting, "checks to appear at "+short(head))
	case len(names) == 0:
		lost = fmt.Sprintf("no check reported at %s within %s (no check is not green)", short(head), p.Grace.Duration())
	}
	for _, name := range names {
		c, ok := byName[name]
		switch {
		case !ok && age < p.Grace.Duration():
			waiting = append(waiting, fmt.Sprintf("required check %q to report", name))
		case !ok:
			lost = fmt.Sprintf("required check %q did not report at %s within %s", name, short(head), p.Grace.Duration())
		case c.State == forge.Pending:
			waiting = append(waiting, fmt.Sprintf("check %q", name))
		case c.State == forge.Failed:
			if m.count(at("rerun:"+name)) == 0 {
				rerun = append(rerun, c)
			} else {
				blockers = append(blockers, Blocker{Kind: FailedCheck, Check: &c})
			}
		}
	}

	// Its base.
	switch o.PR.Mergeable {
	case forge.Conflicting:
		blockers = append(blockers, Blocker{Kind: Conflict, Base: o.PR.Base, BaseSHA: o.PR.BaseSHA})
	case forge.MergeUnknown, "":
		waiting = append(waiting, "the forge to tell whether it merges into "+o.PR.Base)
	}

	// Its review threads.
	for _, t := range o.Threads {
		if t.Resolved || len(t.Comments) == 0 {
			continue
		}
		first := t.Comments[0]
		if first.Author == p.Self || !p.trusted(first) {
			continue
		}
		// The loop's own replies are no feedback, nor is a passer-by's
		// word in a writer's thread (anyone may write on a public pull
		// request): the thread is keyed by, and told, the words of those
		// whose threads block.
		t.Comments = slices.DeleteFunc(slices.Clone(t.Comments), func(c forge.Comment) bool { return c.Author == p.Self || !p.counts(c) })
		blockers = append(blockers, Blocker{Kind: OpenThread, Thread: &t})
	}

	// Its reviews, for the targets past green.
	if p.Target != Green {
		for _, r := range latestReviews(o.Reviews, p.Self) {
			if r.State != forge.ChangesRequested || !p.trusted(forge.Comment{Author: r.Author, Permission: r.Permission}) {
				// A passer-by's words are no feedback, as their threads.
				continue
			}
			if r.Stale || (r.CommitSHA != "" && r.CommitSHA != head) {
				waiting = append(waiting, r.Author+" to review the new head")
				continue
			}
			blockers = append(blockers, Blocker{Kind: ChangesRequested, Review: &r})
		}
	}

	var fresh, stuck []Blocker
	for _, b := range blockers {
		switch {
		case m.count(doneKey(head, b)) == 0:
			fresh = append(fresh, b)
		case b.Kind == OpenThread:
			// Answered: the next word is the reviewer's.
			waiting = append(waiting, fmt.Sprintf("%s to answer on %s", b.Thread.Comments[0].Author, where(*b.Thread)))
		case b.Kind == ChangesRequested:
			waiting = append(waiting, b.Review.Author+" to review again")
		default:
			stuck = append(stuck, b)
		}
	}
	m = m.look(fingerprint(p, o), o.At)
	switch {
	case len(fresh) > 0 && m.Rounds >= p.MaxRounds:
		act.Do, act.Blockers = GiveUp, blockers
		act.Reason = fmt.Sprintf("%s made and the pull request is still blocked: %s", plural.N(m.Rounds, "round"), listed(blockers))
	case len(fresh) > 0 && sameFailures(m, fresh) >= MaxSameFailures:
		act.Do, act.Blockers = GiveUp, fresh
		act.Reason = fmt.Sprintf("same-error: %s in a row pushed a change and met the same failing checks again (%s); another round would pay for the same",
			plural.N(MaxSameFailures, "round"), listed(fresh))
	case len(fresh) > 0:
		act.Do, act.Blockers = Attempt, fresh
		for _, b := range fresh {
			m.Done = append(m.Done, doneKey(head, b))
		}
		m.Same = sameFailures(m, fresh)
		m.Failures = failures(fresh)
		m.Rounds++
		// The time the round works is not time waited: the wait for
		// something new (GiveUpAfter) counts from the next look.
		m.SeenSince = time.Time{}
	case len(rerun) > 0:
		act.Do, act.Checks = Rerun, rerun
		for _, c := range rerun {
			m.Done = append(m.Done, at("rerun:"+c.Name))
		}
	case lost != "":
		act.Do, act.Reason, act.Blockers = GiveUp, lost, blockers
	case len(stuck) > 0:
		// Acted on at this head, and the head is the same: an attempt that
		// pushed nothing, and waiting will not change it.
		act.Do, act.Blockers = GiveUp, stuck
		act.Reason = fmt.Sprintf("an attempt addressed %s at %s and no new head came of it", listed(stuck), short(head))
	case len(waiting) > 0:
		act.Do, act.Waiting, act.After = Wait, waiting, m.wait(p)
	default:
		act = ready(p, o, m, act)
		if act.Do == Merge {
			m.Done = append(m.Done, at("merge"))
		}
		if act.Do == Wait {
			act.After = m.wait(p)
		}
	}
	if act.Do == Wait && p.GiveUpAfter > 0 {
		act = giveUpAfter(p, o, m, act, blockers)
	}
	return act, m
}

// giveUpAfter is the wait act once Policy.GiveUpAfter is counted: a give-up
// when nothing new came for that long, else the wait, no longer than what
// is left of it.
func giveUpAfter(p Policy, o Observation, m Memory, act Action, blockers []Blocker) Action {
	idle := o.At.Sub(m.SeenSince)
	left := p.GiveUpAfter.Duration() - idle
	if left > 0 {
		act.After = min(act.After, millis.Of(left))
		return act
	}
	return Action{Do: GiveUp, Head: act.Head, Blockers: blockers,
		Reason: fmt.Sprintf("nothing new on the pull request for %s (--give-up-after) while it waited for %s",
			p.GiveUpAfter.Duration(), strings.Join(act.Waiting, ", "))}
}

// MaxSameFailures is how many rounds in a row may be woken for the same
// failing checks (the same names, states and descriptions at each new
// head they pushed): the next is not, and the loop gives up.
const MaxSameFailures = 2

// failures is what the failed checks among bs said, "" for none.
func failures(bs []Blocker) string {
	var parts []string
	for _, b := range bs {
		if b.Kind == FailedCheck && b.Check != nil {
			parts = append(parts, b.Check.Name+"="+string(b.Check.State)+":"+b.Check.Conclusion+":"+b.Check.Description)
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, "|")
}

// sameFailures is how many rounds in a row, the next included, are woken
// for the failed checks of bs (0 when they are none, or new).
func sameFailures(m Memory, bs []Blocker) int {
	f := failures(bs)
	switch {
	case f == "":
		return 0
	case f == m.Failures:
		return m.Same + 1
	}
	return 0
}

// ready is the decision once nothing blocks green: done, wait for an
// approval, or merge.
func ready(p Policy, o Observation, m Memory, act Action) Action {
	head := o.PR.HeadSHA
	if p.Target == Green {
		act.Do, act.Reason = Done, "green at "+short(head)
		return act
	}
	switch o.Reviews.Decision {
	case forge.DecisionApproved, forge.NoDecision, "":
	default:
		act.Do, act.Waiting = Wait, []string{"an approving review"}
		return act
	}
	if p.Target == Approved {
		act.Do, act.Reason = Done, "green and approved at "+short(head)
		return act
	}
	if m.count(head+" merge") >= MaxMergeTries {
		act.Do, act.Reason = GiveUp, fmt.Sprintf("the forge refused to merge %s %d times", short(head), MaxMergeTries)
		return act
	}
	act.Do = Merge
	return act
}

// counts tells whether comment c, in a thread that blocks, is feedback:
// its author's threads block (trusted), or the policy keeps the rule of
// before (AnyWord).
func (p Policy) counts(c forge.Comment) bool { return p.AnyWord || p.trusted(c) }

// trusted tells whether the author of comment c is one whose threads
// block: a writer of the repository, or one the policy lists.
func (p Policy) trusted(c forge.Comment) bool {
	return c.Permission.CanWrite() || slices.Contains(p.Trusted, c.Author)
}

// checkNames are the names of the checks that decide green at the
// looked-at head (the required ones when the base names some, else every
// reported one), sorted, and the reported checks by name.
func checkNames(cs forge.Checks) ([]string, map[string]forge.Check) {
	by := map[string]forge.Check{}
	for _, c := range cs.Checks {
		by[c.Name] = c
	}
	var names []string
	if cs.RequiredKnown && len(cs.Required) > 0 {
		names = slices.Clone(cs.Required)
	} else {
		for n := range by {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return slices.Compact(names), by
}

// latestReviews are each author's latest review that gave a verdict,
// jlgcli's own left out.
func latestReviews(rs forge.Reviews, self string) []forge.Review {
	last := map[string]forge.Review{}
	var order []string
	for _, r := range rs.Reviews {
		if r.Author == self || (r.State != forge.Approved && r.State != forge.ChangesRequested && r.State != forge.Dismissed) {
			continue
		}
		if _, ok := last[r.Author]; !ok {
			order = append(order, r.Author)
		}
		if prev, ok := last[r.Author]; !ok || !r.Submitted.Before(prev.Submitted) {
			last[r.Author] = r
		}
	}
	out := make([]forge.Review, 0, len(order))
	for _, a := range order {
		out = append(out, last[a])
	}
	return out
}

// fingerprint is what a look found, in short: two looks alike leave the
// loop waiting longer, and count towards Policy.GiveUpAfter. A passer-by's
// words (their threads, replies and reviews) are not in it: they are no
// feedback, and anyone could otherwise keep the loop from giving up.
func fingerprint(p Policy, o Observation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s %s", o.PR.State, o.PR.HeadSHA, o.PR.Mergeable, o.Reviews.Decision)
	for _, c := range o.Checks.Checks {
		fmt.Fprintf(&b, "|%s=%s", c.Name, c.State)
	}
	counts := func(c forge.Comment) bool { return c.Author == p.Self || p.counts(c) }
	for _, t := range o.Threads {
		n := 0
		for _, c := range t.Comments {
			if counts(c) {
				n++
			}
		}
		if n > 0 {
			fmt.Fprintf(&b, "|%s:%t:%d", t.ID, t.Resolved, n)
		}
	}
	for _, r := range o.Reviews.Reviews {
		if counts(forge.Comment{Author: r.Author, Permission: r.Permission}) {
			fmt.Fprintf(&b, "|%d:%s", r.ID, r.State)
		}
	}
	return b.String()
}

// look is m after a look that found seen.
func (m Memory) look(seen string, at time.Time) Memory {
	switch {
	case seen != m.Seen:
		m.Seen, m.Quiet, m.SeenSince = seen, 0, at
	case m.SeenSince.IsZero(): // after a round or a resume, or kept before SeenSince was
		m.Quiet++
		m.SeenSince = at
	default:
		m.Quiet++
	}
	return m
}

// wait is how long to wait after a look: Poll, doubled for each look in a
// row that found nothing new, at most MaxPoll.
func (m Memory) wait(p Policy) millis.Duration {
	d := p.Poll
	for i := 0; i < m.Quiet && d < p.MaxPoll; i++ {
		d *= 2
	}
	return min(d, p.MaxPoll)
}

// Restarted is m for a run of the loop that starts again from it (a
// resume): the time it did not run is not time it waited, so the wait for
// something new (Policy.GiveUpAfter) counts from its first look.
func (m Memory) Restarted() Memory {
	m.SeenSince = time.Time{}
	return m
}

// Pushed is m after the loop pushed head: its next lease, and the head
// whose checks it waits for.
func (m Memory) PushedAt(head string, at time.Time) Memory {
	m.Pushed, m.Head, m.HeadSince, m.Quiet = head, head, at, 0
	return m
}

func listed(bs []Blocker) string {
	parts := make([]string, 0, len(bs))
	for _, b := range bs {
		parts = append(parts, b.String())
	}
	return strings.Join(parts, "; ")
}

func short(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}

// oneLine is s on one line, at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
