package sheet

import (
	"fmt"
	"strconv"
)

// Error is a sheet that cannot be used: where it is and what is wrong.
// A batch stops on it before any agent runs (a usage error).
type Error struct {
	// File is the sheet's path.
	File string
	// Line is the line in the file, 0 when the error is the whole file's.
	Line int
	// Key is the front-matter key at fault, "" when none.
	Key string
	Msg string
}

// Error is "FILE:LINE: KEY: what is wrong", without the parts unknown.
func (e *Error) Error() string {
	where := e.File
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		return fmt.Sprintf("%s: %s: %s", where, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s", where, e.Msg)
}

// Warning is something in a sheet that jlgcli ignores or guessed: the
// batch goes on, and the user is told.
type Warning struct {
	File string
	// Line is the line in the file, 0 when none applies.
	Line int
	Msg  string
}

// String is "FILE:LINE: message", without the line when unknown.
func (w Warning) String() string {
	if w.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", w.File, w.Line, w.Msg)
	}
	return fmt.Sprintf("%s: %s", w.File, w.Msg)
}
