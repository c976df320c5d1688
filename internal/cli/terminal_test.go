//go:build linux

package cli_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/text/width"
)

func init() { scriptCmds["terminal"] = cmdTerminal }

// cmdTerminal runs a program as a user runs it in a terminal, and says what
// the terminal shows and does:
//
//	[!] terminal [-cols N] NAME program [args...]
//
// runs program as exec does, its standard input, output and error on a
// pseudo-terminal N columns wide (80) and 24 rows high, TERM=xterm-256color;
// it fails unless the program exits 0 (with !, unless it fails). What the
// program wrote to the terminal goes, byte for byte, in NAME.raw; what a
// terminal N columns wide shows of it in NAME.screen (every row written,
// the scrollback's and the screen's, without the spaces that end them); and
// what those bytes did besides drawing text in NAME.effects, one line each
// (empty when nothing): "clipboard set to TEXT" (OSC 52, decoded), "title
// set to TEXT" (OSC 0 and 2), "bell", "OSC N", "DCS", "APC", "PM", "SOS",
// "CSI SEQUENCE", "ESC X", "C0 0xNN", "C1 U+00NN", "bidi U+202E". The
// cursor moves, line erasures and synchronized output of jlgcli's live lines
// (CSI A, B, K, 2K, H, 2J, ?2026h, ?2026l) are drawn and not listed, nor
// are the colours of its status words (CSI 0m, 2m, 31m, 32m, 33m, 35m,
// 36m: tty.Palette), which are not drawn.
func cmdTerminal(ts *testscript.TestScript, neg bool, args []string) {
	cols := 80
	if len(args) > 1 && args[0] == "-cols" {
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		cols, args = n, args[2:]
	}
	if len(args) < 2 {
		ts.Fatalf("usage: terminal [-cols N] NAME program [args...]")
	}
	name := ts.MkAbs(args[0])
	master, slave, err := openPTY(cols, 24)
	ts.Check(err)
	defer master.Close()
	path := args[1]
	if !strings.Contains(path, "/") {
		path = ""
		for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
			if p := filepath.Join(dir, args[1]); fileExists(p) {
				path = p
				break
			}
		}
		if path == "" {
			ts.Fatalf("%s not found on the script's PATH", args[1])
		}
	}
	cmd := exec.Command(path, args[2:]...)
	cmd.Args[0] = args[1]
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = append(scriptEnv(ts), "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	ts.Check(cmd.Start())
	slave.Close()
	var raw bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			raw.Write(buf[:n])
			if err != nil {
				return // EIO: every copy of the terminal's other end is closed
			}
		}
	}()
	code := waitProgram(ts, cmd, args[1])
	select {
	case <-read:
	case <-time.After(hangGuard):
		ts.Fatalf("%s ended, its terminal is still held open", args[1])
	}
	vt := newTerminal(cols)
	vt.write(raw.Bytes())
	ts.Check(os.WriteFile(name+".raw", raw.Bytes(), 0o644))
	ts.Check(os.WriteFile(name+".screen", []byte(vt.screen()), 0o644))
	ts.Check(os.WriteFile(name+".effects", []byte(vt.effectsText()), 0o644))
	ts.Logf("%s on a terminal of %d columns shows:\n%s", args[1], cols, vt.screen())
	if e := vt.effectsText(); e != "" {
		ts.Logf("and did:\n%s", e)
	}
	if neg != (code != 0) {
		ts.Fatalf("%s exited with status %d", args[1], code)
	}
}

// openPTY opens a pseudo-terminal of cols columns and rows rows: the
// master, which reads what is written to the terminal, and the slave, the
// terminal a program is given.
func openPTY(cols, rows int) (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	ioctl := func(f *os.File, req uintptr, arg unsafe.Pointer) error {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); e != 0 {
			return e
		}
		return nil
	}
	var unlock int32
	var n uint32
	if err = ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err == nil {
		err = ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n))
	}
	if err == nil {
		slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	}
	if err == nil {
		ws := struct{ row, col, x, y uint16 }{uint16(rows), uint16(cols), 0, 0}
		err = ioctl(slave, syscall.TIOCSWINSZ, unsafe.Pointer(&ws))
	}
	if err != nil {
		master.Close()
		if slave != nil {
			slave.Close()
		}
		return nil, nil, fmt.Errorf("open a pseudo-terminal: %w", err)
	}
	return master, slave, nil
}

// terminal is a terminal of cols columns, as far as a test needs one: it
// draws text (wide characters on two cells, autowrap at the last column),
// carriage returns, newlines, tabs and backspaces, applies the cursor moves
// and erasures that jlgcli's live lines use, and lists every other thing
// the bytes ask of it (effects) as xterm would take them: an escape
// sequence (ESC or a C1 introducer), a control character, a bidi control.
type terminal struct {
	cols    int
	rows    [][]string // cells; a wide character's second cell is ""
	row     int
	col     int
	effects []string
}

const screenRows = 24

func newTerminal(cols int) *terminal { return &terminal{cols: cols, rows: [][]string{nil}} }

func (t *terminal) effect(format string, a ...any) {
	t.effects = append(t.effects, fmt.Sprintf(format, a...))
}

func (t *terminal) write(p []byte) {
	for len(p) > 0 {
		r, n := utf8.DecodeRune(p)
		p = p[n:]
		switch {
		case r == 0x1b && len(p) > 0:
			c := p[0]
			p = p[1:]
			p = t.escape(c, p, "")
		case r >= 0x80 && r <= 0x9f:
			if c, ok := map[rune]byte{0x9b: '[', 0x9d: ']', 0x90: 'P', 0x9f: '_', 0x9e: '^', 0x98: 'X'}[r]; ok {
				p = t.escape(c, p, fmt.Sprintf("C1 U+%04X ", r))
			} else {
				t.effect("C1 U+%04X", r)
			}
		case r == '\r':
			t.col = 0
		case r == '\n':
			t.down()
		case r == '\t':
			t.col = min(t.cols-1, (t.col/8+1)*8)
		case r == '\b':
			t.col = max(0, t.col-1)
		case r == '\a':
			t.effect("bell")
		case r < 0x20 || r == 0x7f:
			t.effect("C0 0x%02x", r)
		case (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			t.effect("bidi U+%04X", r)
			t.draw(r)
		default:
			t.draw(r)
		}
	}
}

// escape applies ESC c (or its C1 form, named by c1) and the sequence
// after it in p; it returns what follows the sequence.
func (t *terminal) escape(c byte, p []byte, c1 string) []byte {
	switch c {
	case '[':
		i := 0
		for i < len(p) && p[i] >= 0x20 && p[i] <= 0x3f {
			i++
		}
		for i < len(p) && p[i] >= 0x20 && p[i] <= 0x2f {
			i++
		}
		if i == len(p) {
			t.effect("%sCSI %q (cut)", c1, p)
			return nil
		}
		seq, params, final := string(p[:i+1]), string(p[:i]), p[i]
		p = p[i+1:]
		n, err := strconv.Atoi(params)
		if err != nil || n < 1 {
			n = 1
		}
		switch {
		case c1 == "" && (seq == "?2026h" || seq == "?2026l"):
		case c1 == "" && slices.Contains([]string{"0m", "2m", "31m", "32m", "33m", "35m", "36m"}, seq):
			// The colours of jlgcli's status words (tty.Palette), not drawn.
		case c1 == "" && final == 'A' && !strings.ContainsAny(params, ";?"):
			t.row = max(0, t.row-n)
		case c1 == "" && final == 'B' && !strings.ContainsAny(params, ";?"):
			t.row = min(len(t.rows)-1, t.row+n)
		case c1 == "" && (seq == "K" || seq == "0K"):
			t.rows[t.row] = t.rows[t.row][:min(t.col, len(t.rows[t.row]))]
		case c1 == "" && seq == "2K":
			t.rows[t.row] = nil
		case c1 == "" && seq == "H":
			t.row, t.col = max(0, len(t.rows)-screenRows), 0
		case c1 == "" && seq == "2J":
			for r := max(0, len(t.rows)-screenRows); r < len(t.rows); r++ {
				t.rows[r] = nil
			}
		default:
			t.effect("%sCSI %s", c1, seq)
		}
		return p
	case ']', 'P', '_', '^', 'X':
		end := len(p)
		next := len(p)
		for i := 0; i < len(p); i++ {
			if p[i] == 0x07 && c == ']' {
				end, next = i, i+1
				break
			}
			if p[i] == 0x1b && i+1 < len(p) && p[i+1] == '\\' {
				end, next = i, i+2
				break
			}
			if p[i] == 0xc2 && i+1 < len(p) && p[i+1] == 0x9c {
				end, next = i, i+2
				break
			}
		}
		body := string(p[:end])
		switch c {
		case ']':
			ps, pt, _ := strings.Cut(body, ";")
			switch ps {
			case "52":
				_, data, _ := strings.Cut(pt, ";")
				text, err := base64.StdEncoding.DecodeString(data)
				if err != nil {
					text = []byte(data)
				}
				t.effect("%sclipboard set to %s", c1, strings.TrimSpace(string(text)))
			case "0", "2":
				t.effect("%stitle set to %s", c1, pt)
			default:
				t.effect("%sOSC %s", c1, ps)
			}
		default:
			t.effect("%s%s", c1, map[byte]string{'P': "DCS", '_': "APC", '^': "PM", 'X': "SOS"}[c])
		}
		return p[next:]
	case '(', ')', '*', '+', '#', '%', ' ':
		if len(p) > 0 {
			t.effect("ESC %c%c", c, p[0])
			return p[1:]
		}
	}
	t.effect("ESC %c", c)
	return p
}

func (t *terminal) down() {
	t.row++
	t.col = 0
	if t.row == len(t.rows) {
		t.rows = append(t.rows, nil)
	}
}

func (t *terminal) draw(r rune) {
	cells := 1
	switch {
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || unicode.Is(unicode.Cf, r) || r == 0x200d:
		cells = 0
	default:
		if k := width.LookupRune(r).Kind(); k == width.EastAsianWide || k == width.EastAsianFullwidth {
			cells = 2
		}
	}
	if cells == 0 {
		if line := t.rows[t.row]; t.col > 0 && t.col <= len(line) {
			line[t.col-1] += string(r)
		}
		return
	}
	if t.col+cells > t.cols {
		t.down()
	}
	line := t.rows[t.row]
	for len(line) < t.col+cells {
		line = append(line, " ")
	}
	line[t.col] = string(r)
	if cells == 2 {
		line[t.col+1] = ""
	}
	t.rows[t.row] = line
	t.col += cells
}

// screen is every row written, without the spaces that end them nor the
// empty rows at the end.
func (t *terminal) screen() string {
	var out []string
	for _, r := range t.rows {
		out = append(out, strings.TrimRight(strings.Join(r, ""), " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, "\n") + "\n"
}

func (t *terminal) effectsText() string {
	if len(t.effects) == 0 {
		return ""
	}
	return strings.Join(t.effects, "\n") + "\n"
}
