package git

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// BranchPrefix starts the name of every task branch.
const BranchPrefix = "jlgcli/"

// RefPrefix starts the refs that keep a task's base and snapshots:
// refs/jlgcli/<id>/base, refs/jlgcli/<id>/<name>.
const RefPrefix = "refs/jlgcli/"

// MaxSlug is the longest Slug.
const MaxSlug = 40

// folds spells accented Latin letters in ASCII, so that a French task keeps
// readable words ("créer" → "creer").
var folds = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'ā': "a", 'ą': "a",
	'æ': "ae", 'ç': "c", 'ć': "c", 'č': "c", 'ď': "d", 'đ': "d", 'ð': "d",
	'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ē': "e", 'ę': "e", 'ě': "e",
	'ì': "i", 'í': "i", 'î': "i", 'ï': "i", 'ī': "i", 'ł': "l", 'ľ': "l",
	'ñ': "n", 'ń': "n", 'ň': "n", 'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o",
	'ø': "o", 'ō': "o", 'ő': "o", 'œ': "oe", 'ř': "r", 'ś': "s", 'š': "s", 'ş': "s",
	'ß': "ss", 'ť': "t", 'ţ': "t", 'þ': "th", 'ù': "u", 'ú': "u", 'û': "u", 'ü': "u",
	'ū': "u", 'ů': "u", 'ű': "u", 'ý': "y", 'ÿ': "y", 'ź': "z", 'ż': "z", 'ž': "z",
}

// Slug turns a task into a branch-name component: lowercase ASCII letters
// and digits in words joined by single dashes, accented Latin letters
// folded to ASCII, at most MaxSlug characters (cut at a word end when one is
// near), never empty ("task").
func Slug(task string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(task) {
		var s string
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			s = string(r)
		default:
			s = folds[r]
		}
		if s == "" {
			dash = b.Len() > 0
			continue
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteString(s)
		if b.Len() > MaxSlug {
			break
		}
	}
	slug := b.String()
	if len(slug) > MaxSlug {
		cut := slug[:MaxSlug]
		// Cut at the last word end when it keeps at least half.
		if i := strings.LastIndexByte(cut, '-'); i >= MaxSlug/2 && slug[MaxSlug] != '-' {
			cut = cut[:i]
		}
		slug = strings.TrimRight(cut, "-")
	}
	if slug == "" {
		return "task"
	}
	return slug
}

// shortID is the part of a run id that names its branch: the last
// dash-separated part when it is 4 to 12 letters or digits (the random part
// of a run id, "3fa91c07"), else 8 hex digits of the id's sha256.
func shortID(id string) string {
	last := id[strings.LastIndexByte(id, '-')+1:]
	if n := len(last); n >= 4 && n <= 12 && last != id {
		ok := true
		for _, c := range last {
			ok = ok && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
		}
		if ok {
			return strings.ToLower(last)
		}
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:4])
}

// BranchName is the branch of task id: jlgcli/<slug>-<shortid>.
func BranchName(id, task string) string {
	return BranchPrefix + Slug(task) + "-" + shortID(id)
}

// checkName refuses a task id or snapshot name that is not one plain
// ref-name and directory-name component.
func checkName(what, s string) error {
	bad := s == "" || len(s) > 128 || s[0] == '.' || s[0] == '-' ||
		strings.HasSuffix(s, ".") || strings.HasSuffix(s, ".lock") || strings.Contains(s, "..")
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("invalid %s %q: only letters, digits, '-', '_' and '.' (not first, not '..') are allowed", what, s)
	}
	return nil
}
