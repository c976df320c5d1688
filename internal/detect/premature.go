// Package detect holds the rules that notice an agent going wrong. For now it
// has one: premature stop, a reply that says the task is done while it
// announces work still to do ("next steps", "il reste à faire").
package detect

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Premature detects a reply that announces work left to do. Every list holds
// patterns, matched case-insensitively, accents ignored ("etapes" matches
// "étapes" and the other way round), on whole words, in prose only: fenced
// code blocks, `inline code` and block-quoted lines (> ...) are ignored.
//
// A pattern is words separated by blanks; punctuation between words in the
// reply does not count except sentence ends, and apostrophes and hyphens
// separate words ("I'll" is the words "i ll", "follow-up" is "follow up").
// In a pattern:
//   - "word*" matches words that start with "word", "*ed" words that end
//     with "ed";
//   - "#" matches a number;
//   - ":" matches a colon ("TODO:");
//   - "…" (or "...") matches anything within the same sentence, up to 64
//     words: "I will … later" matches "I will update the docs later";
//   - "^" at the start anchors the pattern at the start of a sentence.
type Premature struct {
	// Phrases announce work left to do: a match is a finding.
	Phrases []string `json:"phrases"`
	// Deferrals are phrases that also narrate what was done ("ensuite",
	// "afterwards", "I completed the remaining tasks"): a match is a finding
	// unless its sentence narrates the past (holds a Past marker and no
	// Future marker).
	Deferrals []string `json:"deferrals"`
	// Negations suppress a match in the same clause (clauses are split by
	// , ; ( ) | dashes and "but", "mais", ...), or that they overlap: "no
	// remaining tasks", "rien ne reste à faire". After a line that holds only
	// the phrase ("## Next steps"), a negation that opens the next sentence
	// ("None.") suppresses it too.
	Negations []string `json:"negations"`
	// Past and Future mark a sentence's tense for Deferrals.
	Past   []string `json:"past"`
	Future []string `json:"future"`
}

// Finding is a phrase announcing work left, where it was found.
type Finding struct {
	// Phrase is the pattern that matched, as configured.
	Phrase string `json:"phrase"`
	// Excerpt is the sentence it was found in (with the next one when the
	// phrase was a heading), at most MaxExcerpt bytes.
	Excerpt string `json:"excerpt"`
	// Line is the line of the reply, from 1.
	Line int `json:"line"`
}

// MaxExcerpt bounds Finding.Excerpt.
const MaxExcerpt = 300

// DefaultPremature returns the built-in lists, English and French; the
// French ones hold every phrase of the rule sheet on persistent execution
// (seed 002), except where noted in the lists.
func DefaultPremature() Premature {
	return Premature{
		Phrases:   append(append([]string(nil), englishPhrases...), frenchPhrases...),
		Deferrals: append(append([]string(nil), englishDeferrals...), frenchDeferrals...),
		Negations: append(append([]string(nil), englishNegations...), frenchNegations...),
		Past:      append(append([]string(nil), englishPast...), frenchPast...),
		Future:    append(append([]string(nil), englishFuture...), frenchFuture...),
	}
}

// NewPremature returns the built-in lists with those given by the user in
// place of the built-in ones: phrases, when not nil, replace Phrases and
// Deferrals (the user's phrases are then all there is); negations, when not
// nil, replace Negations.
func NewPremature(phrases, negations []string) Premature {
	p := DefaultPremature()
	if phrases != nil {
		p.Phrases, p.Deferrals = phrases, nil
	}
	if negations != nil {
		p.Negations = negations
	}
	return p
}

// Validate reports the first pattern that cannot match anything, naming its
// list and index ("phrases[2]").
func (p Premature) Validate() error {
	for _, l := range []struct {
		name string
		list []string
	}{{"phrases", p.Phrases}, {"deferrals", p.Deferrals}, {"negations", p.Negations}, {"past", p.Past}, {"future", p.Future}} {
		for i, s := range l.list {
			if _, err := compilePattern(s); err != nil {
				return fmt.Errorf("%s[%d]: %w", l.name, i, err)
			}
		}
	}
	return nil
}

// Check looks for the first phrase of p in reply that announces work left
// and is neither negated nor narration; it reports where. An invalid pattern
// is skipped (Validate reports it). Check reads any reply: the engine calls it
// on a reply that signals done.
func (p Premature) Check(reply string) (Finding, bool) {
	m := p.compile()
	if len(m.phrases.pats) == 0 {
		return Finding{}, false
	}
	var (
		sc      scanner
		fence   string
		pending *Finding // a heading-only match, waiting for the next sentence
		n       int
	)
	for raw := range strings.Lines(reply) {
		n++
		line := strings.TrimRight(raw, "\r\n")
		if fence != "" {
			if closes(line, fence) {
				fence = ""
			}
			continue
		}
		if f := fenceOf(line); f != "" && !(f[0] == '`' && strings.Contains(strings.TrimLeft(line, " \t")[len(f):], "`")) {
			fence = f
			continue
		}
		if t := strings.TrimLeft(line, " \t"); strings.HasPrefix(t, ">") {
			continue // a quotation: not the agent's own words
		}
		var masked string
		masked, sc.mask = maskCode(line, sc.mask)
		sc.line(masked)
		for _, s := range sc.sents {
			text := line[s.start:s.end]
			if pending != nil {
				if m.negatesOpening(&sc, s) {
					pending = nil
				} else {
					pending.Excerpt = excerpt(pending.Excerpt + " " + strings.TrimSpace(text))
					return *pending, true
				}
			}
			ph, heading, ok := m.first(&sc, s)
			if !ok {
				continue
			}
			f := Finding{Phrase: ph, Excerpt: excerpt(text), Line: n}
			if heading {
				pending = &f
				continue
			}
			return f, true
		}
	}
	if pending != nil {
		return *pending, true
	}
	return Finding{}, false
}

// excerpt trims s and bounds it to MaxExcerpt bytes, cut at a character.
func excerpt(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= MaxExcerpt {
		return s
	}
	cut := MaxExcerpt - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ContinuePrompt is the continuation text for a reply that said done while
// announcing more work: it quotes the finding and asks the agent to do that
// work now. It says nothing of how to signal done: the engine adds that.
func ContinuePrompt(f Finding) string {
	return "Your last reply says the task is done, but it also announces work that is not done yet:\n\n" +
		"> " + strings.ReplaceAll(f.Excerpt, "\n", " ") + "\n\n" +
		"Do that work now instead of leaving it for later: carry out every next step, remaining task or later action " +
		"you mentioned that belongs to the task, check the result, and only then say the task is done. " +
		"If nothing is actually left, say the task is done without announcing further steps.\n"
}
