package sheet

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/jlgcli/jlgcli/internal/config"
)

// ignoredKeys are the keys of editors' prompt files (VS Code, Copilot):
// accepted and ignored.
var ignoredKeys = map[string]bool{"agent": true, "mode": true, "tools": true}

// keyHints map a likely mistake to the key it stands for.
var keyHints = map[string]string{
	"dependencies": "depends", "dependson": "depends", "depends_on": "depends", "deps": "depends",
	"needs": "depends", "after": "depends", "requires": "depends",
	"title": "description", "name": "description",
	"tier": "tiers", "check": "checks", "attempt": "attempts",
	"budgetusd": "budget", "budget_usd": "budget", "cost": "budget",
	"timeoutms": "timeout", "duration": "timeout",
	"edittests": "editTests", "edit-tests": "editTests", "edit_tests": "editTests",
}

// decoder decodes a front matter into a Sheet.
type decoder struct {
	file   string
	offset int // file line = offset + YAML line
	s      *Sheet
	warns  []Warning
	lines  map[string]int // the file line of each key seen
}

// yamlLineRe matches the line of a YAML syntax error.
var yamlLineRe = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserErrors are the YAML parser's (not its scanner's) errors: the YAML
// library gives their line counted from 0 (it adds 1 to the scanner's
// only); the line is where the construct that failed starts.
var parserErrors = map[string]bool{
	"did not find expected ',' or ']'":    true,
	"did not find expected ',' or '}'":    true,
	"did not find expected '-' indicator": true,
	"did not find expected key":           true,
	"did not find expected node content":  true,
	"found undefined tag handle":          true,
}

func (d *decoder) decode(fm []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(fm, &doc); err != nil {
		msg, line := err.Error(), 0
		if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			if parserErrors[m[2]] {
				n++
			}
			line, msg = d.offset+n, m[2]
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
			line = d.offset
		}
		return &Error{File: d.file, Line: line, Msg: "the front matter is not valid YAML: " + msg}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // empty, or only comments
	}
	root := resolve(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return &Error{File: d.file, Line: d.line(root), Msg: "the front matter is not a mapping of keys to values"}
	}
	d.lines = map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := resolve(root.Content[i]), resolve(root.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return &Error{File: d.file, Line: d.line(k), Msg: "a front-matter key is not a name"}
		}
		key := k.Value
		if first, ok := d.lines[key]; ok {
			return &Error{File: d.file, Line: d.line(k), Key: key, Msg: fmt.Sprintf("set twice (first at line %d)", first)}
		}
		d.lines[key] = d.line(k)
		if err := d.field(key, k, v); err != nil {
			return err
		}
	}
	if d.s.Has(FieldTiers) {
		for _, other := range []struct {
			f    Field
			name string
		}{{FieldBackend, "backend"}, {FieldModel, "model"}} {
			if d.s.Has(other.f) {
				return &Error{File: d.file, Line: d.lines["tiers"], Key: "tiers",
					Msg: fmt.Sprintf("tiers and %s are both set: give the tiers as BACKEND[:MODEL], or one backend and model", other.name)}
			}
		}
	}
	return nil
}

// field decodes the value v of key k.
func (d *decoder) field(key string, k, v *yaml.Node) error {
	s := d.s
	bad := func(format string, args ...any) error {
		return &Error{File: d.file, Line: d.line(v), Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	switch key {
	case "id":
		id, ok := str(v)
		if !ok {
			return bad("want an id, got %s", describe(v))
		}
		if why := validID(id); why != "" {
			return bad("%q %s", id, why)
		}
		s.ID, s.Set = id, s.Set|FieldID
	case "description":
		t, ok := str(v)
		if !ok {
			return bad("want a line of text, got %s", describe(v))
		}
		if t = strings.TrimSpace(t); t != "" {
			s.Title, s.Set = t, s.Set|FieldDescription
		}
	case "depends":
		ids, err := d.list(key, v, true)
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		s.Depends = []string{}
		for i, id := range ids {
			if why := validID(id); why != "" {
				return &Error{File: d.file, Line: d.itemLine(v, i), Key: key,
					Msg: fmt.Sprintf("%q %s: give one id per item (depends: [a, b])", id, why)}
			}
			if seen[id] {
				d.warn(d.itemLine(v, i), fmt.Sprintf("depends names %q twice", id))
				continue
			}
			seen[id] = true
			s.Depends = append(s.Depends, id)
		}
		s.DependsFrom, s.Set = FromFrontMatter, s.Set|FieldDepends
	case "backend", "model":
		t, ok := str(v)
		if !ok {
			return bad("want a name, got %s", describe(v))
		}
		if t = strings.TrimSpace(t); t == "" {
			return bad("is empty")
		}
		if key == "backend" {
			s.Backend, s.Set = t, s.Set|FieldBackend
		} else {
			s.Model, s.Set = t, s.Set|FieldModel
		}
	case "tiers":
		tiers, err := d.list(key, v, false)
		if err != nil {
			return err
		}
		for i, t := range tiers {
			if b, _, _ := strings.Cut(t, ":"); strings.TrimSpace(b) == "" || t != strings.TrimSpace(t) {
				return &Error{File: d.file, Line: d.itemLine(v, i), Key: key, Msg: fmt.Sprintf("%q: want BACKEND[:MODEL]", t)}
			}
		}
		s.Tiers, s.Set = tiers, s.Set|FieldTiers
	case "attempts":
		var n int
		if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || v.Decode(&n) != nil {
			return bad("want a whole number of 1 or more, got %s", describe(v))
		}
		if n < 1 {
			return bad("%d: want 1 or more", n)
		}
		s.Attempts, s.Set = n, s.Set|FieldAttempts
	case "budget":
		var f float64
		if v.Kind != yaml.ScalarNode || (v.Tag != "!!int" && v.Tag != "!!float") || v.Decode(&f) != nil {
			return bad("want an amount of US dollars such as 1.50, got %s", describe(v))
		}
		if !(f > 0) || math.IsInf(f, 0) {
			return bad("%s: want an amount greater than 0", v.Value)
		}
		s.BudgetUSD, s.Set = f, s.Set|FieldBudget
	case "checks":
		checks, err := d.list(key, v, false)
		if err != nil {
			return err
		}
		for i, c := range checks {
			if strings.TrimSpace(c) == "" {
				return &Error{File: d.file, Line: d.itemLine(v, i), Key: key, Msg: "a check is an empty command line"}
			}
		}
		s.Checks, s.Set = checks, s.Set|FieldChecks
	case "timeout":
		// A number (timeout: 90) is read as its text: refused for its
		// missing unit, as everywhere.
		t, ok := str(v)
		if !ok || (v.Tag != "!!str" && v.Tag != "!!int" && v.Tag != "!!float") {
			return bad("want a duration such as 90s, 30m or 1h30m, got %s", describe(v))
		}
		dur, err := config.ParseDuration(t)
		if err != nil {
			return bad("%s", err)
		}
		if dur <= 0 {
			return bad("%q: want a duration greater than 0", t)
		}
		s.Timeout, s.Set = dur, s.Set|FieldTimeout
	case "editTests":
		var b bool
		if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
			return bad("want true or false, got %s", describe(v))
		}
		s.EditTests, s.Set = b, s.Set|FieldEditTests
	case "review":
		t, ok := str(v)
		if !ok || v.Tag != "!!str" {
			return bad("want BACKEND[:MODEL] or none, got %s", describe(v))
		}
		if t = strings.TrimSpace(t); t == "" || strings.HasPrefix(t, ":") {
			return bad("%q: want BACKEND[:MODEL] or none", t)
		}
		s.Review, s.Set = t, s.Set|FieldReview
	default:
		if ignoredKeys[key] {
			return nil
		}
		msg := fmt.Sprintf("unknown front-matter key %q, ignored", key)
		if h, ok := keyHints[strings.ToLower(key)]; ok {
			msg += fmt.Sprintf(" (did you mean %q?)", h)
		} else if known := strings.ToLower(key); knownKey(known) && known != key {
			msg += fmt.Sprintf(" (did you mean %q?)", known)
		}
		d.warn(d.line(k), msg)
	}
	return nil
}

// knownKey reports whether key is a front-matter key.
func knownKey(key string) bool {
	switch key {
	case "id", "description", "depends", "backend", "model", "tiers", "attempts", "budget", "checks", "timeout", "editTests", "review":
		return true
	}
	return ignoredKeys[key]
}

// list decodes a list of strings, or a single string as a list of one.
// emptyOK allows an empty list (and null).
func (d *decoder) list(key string, v *yaml.Node, emptyOK bool) ([]string, error) {
	bad := func(line int, format string, args ...any) error {
		return &Error{File: d.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	var out []string
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			break
		}
		t, _ := str(v)
		out = []string{t}
	case yaml.SequenceNode:
		for _, it := range v.Content {
			t, ok := str(resolve(it))
			if !ok {
				return nil, bad(d.line(it), "want a list of strings, got %s in it", describe(resolve(it)))
			}
			out = append(out, t)
		}
	default:
		return nil, bad(d.line(v), "want a list of strings, got %s", describe(v))
	}
	if len(out) == 0 && !emptyOK {
		return nil, bad(d.line(v), "is empty: leave the key out to keep the batch's")
	}
	return out, nil
}

func (d *decoder) warn(line int, msg string) {
	d.warns = append(d.warns, Warning{File: d.file, Line: line, Msg: msg})
}

// line is the file line of n.
func (d *decoder) line(n *yaml.Node) int { return d.offset + n.Line }

// itemLine is the file line of the i-th item of a list, or of the value
// when it is a single scalar.
func (d *decoder) itemLine(v *yaml.Node, i int) int {
	if v.Kind == yaml.SequenceNode && i < len(v.Content) {
		return d.line(v.Content[i])
	}
	return d.line(v)
}

// resolve follows aliases to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// str is the text of a scalar as written (a number or a boolean too), false
// for null, a list or a mapping.
func str(n *yaml.Node) (string, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", false
	}
	return n.Value, true
}

// describe says what a node is, for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return "a value of another kind"
}
