package gate

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// fingerprintVersion prefixes every fingerprint of an output's lines, and
// parsedVersion every fingerprint of the failures a parser read: one
// computed another way, or by another version of the normalizer, never
// equals it, so a stored baseline can only make Judge stricter, never
// wrongly lenient.
const (
	fingerprintVersion = "v1:"
	parsedVersion      = "v3:"
)

// Fingerprint identifies how a check failed, so that the same failure
// compares equal across runs. It hashes the exit code, whether the check
// timed out, and the output as Normalize gives it, taken as a multiset of
// lines: the order of lines does not count, because parallel tests print
// theirs in any order.
//
// Normalization removes what changes from run to run without meaning
// anything (timestamps, durations, memory addresses, temporary paths, PIDs,
// ports, random seeds, terminal colours) and the lines that only report
// success (go test's "=== RUN", "--- PASS", "ok pkg"; pytest's PASSED; jest's
// ✓), together with the counts of passed tests, so that an agent adding
// passing tests does not change the fingerprint of a known failure. A
// different failing test, message, file or line number changes it.
//
// A line of go test -json (a test2json event) counts as the output it
// carries, normalized like any other: its time, elapsed seconds and action
// do not count, nor does an event without output.
func Fingerprint(exitCode int, timedOut bool, output string) string {
	fp := newFingerprinter()
	for line := range strings.Lines(output) {
		fp.add(strings.TrimSuffix(line, "\n"))
	}
	return fp.sum(exitCode, timedOut)
}

// Normalize returns output as Fingerprint reads it, line by line in order.
func Normalize(output string) string {
	var b strings.Builder
	for line := range strings.Lines(output) {
		forLine(strings.TrimSuffix(line, "\n"), func(n string) {
			b.WriteString(n)
			b.WriteByte('\n')
		})
	}
	return b.String()
}

// forLine calls fn with each normalized line that a line of output counts
// as: the line itself, or for a go test -json event the lines of output it
// carries (none for an event without output); nothing for a line that
// does not count.
func forLine(line string, fn func(normalized string)) {
	if t := strings.TrimLeft(line, " \t"); strings.HasPrefix(t, "{") && strings.Contains(t, `"Action"`) {
		var ev goEvent
		if json.Unmarshal([]byte(t), &ev) == nil && ev.Action != "" {
			if ev.Action != "output" && ev.Action != "build-output" {
				return
			}
			for l := range strings.Lines(ev.Output) {
				if n, ok := normalizeLine(strings.TrimRight(l, "\r\n")); ok {
					fn(n)
				}
			}
			return
		}
	}
	if n, ok := normalizeLine(line); ok {
		fn(n)
	}
}

// fingerprinter sums the hashes of normalized lines as they stream; it is
// safe for concurrent use (stdout and stderr feed it from two goroutines).
type fingerprinter struct {
	mu     sync.Mutex
	n      uint64
	hi, lo uint64
}

func newFingerprinter() *fingerprinter { return &fingerprinter{} }

func (f *fingerprinter) addBytes(line []byte, cut bool) { f.add(string(line)) }

func (f *fingerprinter) add(line string) { forLine(line, f.addNormalized) }

// addNormalized counts one normalized line.
func (f *fingerprinter) addNormalized(n string) {
	h := fnv.New128a()
	h.Write([]byte(n))
	var sum [16]byte
	h.Sum(sum[:0])
	f.mu.Lock()
	f.n++
	f.hi += binary.BigEndian.Uint64(sum[:8])
	f.lo += binary.BigEndian.Uint64(sum[8:])
	f.mu.Unlock()
}

func (f *fingerprinter) sum(exitCode int, timedOut bool) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := sha256.Sum256(fmt.Appendf(nil, "exit=%d timedout=%t lines=%d sum=%016x%016x", exitCode, timedOut, f.n, f.hi, f.lo))
	return fingerprintVersion + hex.EncodeToString(s[:16])
}

// normalizeLine is one line of output without its noise; false when the line
// does not count (empty, or a report of success). Each regular expression
// runs only on lines that hold what it needs, which keeps the cost well
// below that of the checks that print the lines.
func normalizeLine(line string) (string, bool) {
	if strings.IndexByte(line, '\x1b') >= 0 {
		line = stripANSI(line)
	}
	if i := strings.LastIndexByte(strings.TrimRight(line, "\r"), '\r'); i >= 0 {
		line = line[i+1:] // a progress line redrawn: its last state
	}
	line = strings.TrimSpace(line)
	if line == "" || successLine(line) {
		return "", false
	}
	if last := line[len(line)-1]; strings.IndexByte(".sxXFE]", last) >= 0 && strings.IndexByte(line, '.') >= 0 {
		if m := progressRE.FindStringSubmatch(line); m != nil {
			// pytest/unittest progress: only failures and errors count.
			fails := strings.Map(func(r rune) rune {
				if r == 'F' || r == 'E' {
					return r
				}
				return -1
			}, m[2]+m[3])
			if fails == "" {
				return "", false
			}
			line = strings.TrimSpace(m[1] + " " + fails)
		}
	}
	if tempRE != nil && strings.IndexByte(line, '/') >= 0 && hasTempRoot(line) {
		line = tempRE.ReplaceAllStringFunc(line, tempPath)
	}
	if strings.ContainsAny(line, "0123456789") {
		for _, r := range replacements {
			if r.pre(line) {
				line = r.re.ReplaceAllString(line, r.with)
			}
		}
	}
	return squeeze(line), true
}

// successLine reports lines that only report success: go test's "=== RUN",
// "--- PASS", "PASS", "ok pkg 0.1s", "? pkg [no test files]"; TAP's "ok 2 -
// name"; jest's and
// mocha's ✓ and "PASS file"; pytest -v's "PASSED" and "SKIPPED".
func successLine(line string) bool {
	switch {
	case line == "PASS":
		return true
	case strings.HasPrefix(line, "=== "):
		for _, w := range []string{"RUN ", "PAUSE ", "CONT ", "NAME "} {
			if strings.HasPrefix(line[4:], w) {
				return true
			}
		}
	case strings.HasPrefix(line, "--- PASS: "), strings.HasPrefix(line, "--- SKIP: "):
		return true
	case strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "ok\t"):
		f := strings.Fields(line)
		if len(f) >= 2 && strings.Trim(f[1], "0123456789") == "" {
			return true // TAP: "ok 2 - adds"
		}
		return len(f) >= 3 && (f[2] == "(cached)" || f[2][0] >= '0' && f[2][0] <= '9' || f[2] == "[no")
	case strings.HasPrefix(line, "? "), strings.HasPrefix(line, "?\t"):
		return strings.HasSuffix(line, "[no test files]")
	case strings.HasPrefix(line, "PASS "):
		return true
	case strings.HasPrefix(line, "✓ "), strings.HasPrefix(line, "✔ "), strings.HasPrefix(line, "√ "), strings.HasPrefix(line, "○ "):
		return true
	case strings.Contains(line, "::"):
		return pytestPassRE.MatchString(line)
	}
	return false
}

var pytestPassRE = regexp.MustCompile(`^\S+::\S+.*\s(?:PASSED|SKIPPED|XFAIL|XPASS)(?:\s+\[\s*\d+%\])?$`)

// squeeze collapses runs of blanks into one space and runs of a repeated
// punctuation character (pytest's ===== banners, whose width follows the
// text they frame) into three of it.
func squeeze(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	var last rune
	run := 0
	for _, r := range s {
		if r == '\t' {
			r = ' '
		}
		if r == last {
			run++
		} else {
			last, run = r, 1
		}
		if r == ' ' && run > 1 {
			continue
		}
		if run > 3 && strings.ContainsRune("=-_*#~.+", r) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]`)

// stripANSI removes terminal escape sequences (colours, cursor moves).
func stripANSI(s string) string {
	if strings.IndexByte(s, '\x1b') < 0 {
		return s
	}
	return ansiRE.ReplaceAllString(s, "")
}

// progressRE matches pytest's and unittest's progress lines: a file and one
// character per test, or the characters alone (then with at least one dot,
// so that a line "x" or "E" stays a line).
var progressRE = regexp.MustCompile(`^(?:(\S+\.py)\s+([.sxXFE]+)|([.sxXFE]*\.[.sxXFE]*))(?:\s+\[\s*\d+%\])?$`)

type replacement struct {
	pre  func(string) bool // false: the expression cannot match
	re   *regexp.Regexp
	with string
}

func has(subs ...string) func(string) bool {
	return func(s string) bool {
		for _, sub := range subs {
			if strings.Contains(s, sub) {
				return true
			}
		}
		return false
	}
}

// digitRun reports a run of at least n digits.
func digitRun(n int) func(string) bool {
	return func(s string) bool {
		run := 0
		for i := 0; i < len(s); i++ {
			if s[i] >= '0' && s[i] <= '9' {
				if run++; run >= n {
					return true
				}
			} else {
				run = 0
			}
		}
		return false
	}
}

// hexRun reports a run of at least n lowercase hex digits.
func hexRun(n int) func(string) bool {
	return func(s string) bool {
		run := 0
		for i := 0; i < len(s); i++ {
			if c := s[i]; c >= '0' && c <= '9' || c >= 'a' && c <= 'f' {
				if run++; run >= n {
					return true
				}
			} else {
				run = 0
			}
		}
		return false
	}
}

// unitAfterDigit reports a digit followed (after an optional space when
// spaced) by a letter that starts a duration unit.
func unitAfterDigit(spaced bool) func(string) bool {
	return func(s string) bool {
		for i := 0; i+1 < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				continue
			}
			j := i + 1
			if spaced {
				if s[j] != ' ' {
					continue
				}
				j++
				if j >= len(s) {
					return false
				}
			}
			if strings.IndexByte("hmsun\xc2\xce", s[j]) >= 0 { // µ is C2 B5, μ is CE BC
				return true
			}
		}
		return false
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// dateLike reports four digits, a separator sep, two digits: 2024-05-01.
func dateLike(seps string) func(string) bool {
	return func(s string) bool {
		for i := 4; i+2 < len(s); i++ {
			if strings.IndexByte(seps, s[i]) >= 0 && isDigit(s[i-1]) && isDigit(s[i-4]) && isDigit(s[i+1]) && isDigit(s[i+2]) {
				return true
			}
		}
		return false
	}
}

// clockLike reports a digit, a colon, two digits, a colon: 10:00:00.
func clockLike(s string) bool {
	for i := 1; i+3 < len(s); i++ {
		if s[i] == ':' && isDigit(s[i-1]) && isDigit(s[i+1]) && isDigit(s[i+2]) && s[i+3] == ':' {
			return true
		}
	}
	return false
}

// uuidLike reports eight hex digits then a dash.
func uuidLike(s string) bool {
	for i := 8; i+4 < len(s); i++ {
		if s[i] == '-' && isHex(s[i-1]) && isHex(s[i-8]) && isHex(s[i+1]) && isHex(s[i+4]) {
			return true
		}
	}
	return false
}

// replacements apply, in order, to lines that hold a digit.
var replacements = []replacement{
	// 2024-05-01T10:00:00.123Z, 2024-05-01 10:00:00,123, npm's 2024-05-01T10_00_00_123Z
	{dateLike("-"), regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T _]\d{2}[:_]\d{2}(?:[:_]\d{2}(?:[.,_]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?`), "<time>"},
	{dateLike("-/"), regexp.MustCompile(`\b\d{4}[-/]\d{2}[-/]\d{2}\b`), "<date>"},
	{clockLike, regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b`), "<time>"},
	{uuidLike, regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`), "<uuid>"},
	// Stack offsets (+0x1d) and addresses (0xc000123456).
	{has("+0x"), regexp.MustCompile(`\+0x[0-9a-fA-F]+\b`), "+0x<off>"},
	{has("0x"), regexp.MustCompile(`\b0x[0-9a-fA-F]{5,}\b`), "0x<addr>"},
	{hexRun(16), regexp.MustCompile(`\b[0-9a-f]{16,}\b`), "<hex>"},
	{has("oroutine", "pid", "PID", "Pid", "rocess", "ROCESS", "hread", "HREAD", "orker", "ORKER"),
		regexp.MustCompile(`(?i)\b(goroutine|pid|process|thread|worker)([ =:#]+)\d+\b`), "$1$2<n>"},
	{has("seed", "Seed", "SEED", "shuffle"), regexp.MustCompile(`(?i)\b(seed|shuffle)([ =:]+)-?\d+\b`), "$1$2<n>"},
	{has("127.0.0.1:", "localhost:", "0.0.0.0:", "[::"), regexp.MustCompile(`\b(127\.0\.0\.1|localhost|0\.0\.0\.0|\[::1?\]):\d+\b`), "$1:<port>"},
	// Epoch seconds and milliseconds (2001 to 2286).
	{digitRun(10), regexp.MustCompile(`\b1\d{9}(?:\d{3})?\b`), "<epoch>"},
	// node --test: "duration_ms: 3.399054" (TAP), "ℹ duration_ms 1059.53" (spec).
	{has("duration_ms"), regexp.MustCompile(`\bduration_ms(:?\s+)\d+(?:\.\d+)?`), "duration_ms$1<dur>"},
	// Durations: 0.012s, 1m2.5s, 3ms, 120µs; then 5 ms, 1.2 s, 3 seconds.
	{unitAfterDigit(false), regexp.MustCompile(`\b(?:\d+(?:\.\d+)?(?:h|m|s|ms|µs|μs|us|ns))+\b`), "<dur>"},
	{unitAfterDigit(true), regexp.MustCompile(`\b\d+(?:\.\d+)?\s(?:ns|µs|μs|us|ms|s|sec|secs|seconds?|min|mins|minutes?|hours?|hrs?)\b`), "<dur>"},
	{has(", estimated <dur>"), regexp.MustCompile(`, estimated <dur>`), ""}, // jest
	{has("B"), regexp.MustCompile(`\b\d+(?:\.\d+)?\s?(?:[KMGT]i?B|kB)\b`), "<size>"},
	{has("%]"), regexp.MustCompile(`\[\s*\d+%\]`), "[<pct>]"},
	{has("% of statements"), regexp.MustCompile(`\b\d+(?:\.\d+)?% of statements`), "<pct> of statements"},
	// Counts of what passed: adding a passing test changes them.
	{has(" pass", " skipped", " pending", " deselected", " xfailed", " xpassed", " warning", " total", " todo", " package"),
		regexp.MustCompile(`\b\d+ (passed|passing|skipped|pending|deselected|xfailed|xpassed|warnings?|total|todo|packages?)\b`), "<n> $1"},
	{has("Ran "), regexp.MustCompile(`\bRan \d+ tests?\b`), "Ran <n> tests"},
	// TAP's and node --test's summary: "# pass 3", "ℹ tests 4".
	{has("tests ", "pass ", "suites ", "skipped ", "todo ", "cancelled "), regexp.MustCompile(`^((?:#|ℹ) (?:tests|pass|suites|skipped|todo|cancelled)) \d+$`), "$1 <n>"},
	{has("collected "), regexp.MustCompile(`\bcollected \d+ items?\b`), "collected <n> items"},
}

// tempRE matches a path in a temporary directory; its first group is the
// character before it, kept.
var tempRE = func() *regexp.Regexp {
	roots := []string{`/tmp`, `/var/tmp`, `/dev/shm`, `(?:/private)?/var/folders/[^/\s]+/[^/\s]+/[TC]`}
	if d := filepath.Clean(os.TempDir()); d != "/tmp" && d != "/" && d != "." {
		roots = append(roots, regexp.QuoteMeta(d))
	}
	return regexp.MustCompile(`(^|[^\w./-])(?:` + strings.Join(roots, "|") + `)((?:/[^\s:'"(),\[\]]*)?)`)
}()

var digitsRE = regexp.MustCompile(`\d+`)

// tempRoots are literal prefixes of what tempRE matches, to skip it cheaply.
var tempRoots = func() []string {
	roots := []string{"/tmp", "/var/tmp", "/dev/shm", "/var/folders/"}
	if d := filepath.Clean(os.TempDir()); d != "/tmp" && d != "/" && d != "." {
		roots = append(roots, d)
	}
	return roots
}()

func hasTempRoot(line string) bool {
	for _, r := range tempRoots {
		if strings.Contains(line, r) {
			return true
		}
	}
	return false
}

// tempPath replaces a temporary root with <tmp> and, in the rest of the path,
// names made by mktemp (tmpXXXX) and runs of digits (TestFoo2716391538/001,
// pytest-12, go-build123).
func tempPath(m string) string {
	sub := tempRE.FindStringSubmatch(m)
	rest := strings.Split(sub[2], "/")
	for i, c := range rest {
		if len(c) > 3 && strings.HasPrefix(c, "tmp") {
			rest[i] = "tmp*"
			continue
		}
		rest[i] = digitsRE.ReplaceAllString(c, "#")
	}
	return sub[1] + "<tmp>" + strings.Join(rest, "/")
}

// parsedFingerprint is the fingerprint of a failed check whose parser
// understood its failure (a structured format: go test -json, go, pytest,
// cargo, python, or a JUnit report): the failing tests' names, locations and
// messages and the errors read from the output (compiler errors, crashes),
// each normalized as Fingerprint normalizes a line and taken as a set, with
// the exit code and whether the check timed out. Nothing else of the
// output counts: not the passing tests, their timings, the order in which
// the tests ran, a package reported "(cached)", nor the elapsed times of
// test2json's events. ok is false when there is nothing to build it from (a
// check that passed or could not start, output that only a text parser read,
// or a failure that the parser could not name): the fingerprint of the
// output's lines stands then.
func parsedFingerprint(format string, cr CheckResult, o *parsed) (string, bool) {
	if o == nil || format == FormatText || cr.Passed || cr.Interrupted || cr.Error != "" ||
		len(o.failures)+len(o.diags) == 0 {
		return "", false
	}
	var entries []string
	for _, f := range o.failures {
		id := f.id
		if id == "" {
			id = f.Package + " " + f.Test
		}
		entries = append(entries, fmt.Sprintf("test %s at %s:%d: %s", id, f.File, f.Line, normalizeText(f.Error)))
	}
	for _, d := range o.diags {
		entries = append(entries, fmt.Sprintf("error %d %s", d.class, normalizeText(d.text)))
	}
	slices.Sort(entries)
	entries = slices.Compact(entries)
	h := sha256.New()
	fmt.Fprintf(h, "exit=%d timedout=%t\n", cr.ExitCode, cr.TimedOut)
	for _, e := range entries {
		fmt.Fprintf(h, "%d:%s\n", len(e), e)
	}
	return parsedVersion + hex.EncodeToString(h.Sum(nil)[:16]), true
}

// normalizeText is a text of several lines as Normalize gives it, its lines
// joined by newlines.
func normalizeText(s string) string {
	return strings.TrimSuffix(Normalize(s), "\n")
}
