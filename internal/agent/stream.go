package agent

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/proc"
)

// Helpers shared by the JSON-lines parsers of the agent CLIs.

// otherKeep bounds the non-JSON lines a parser keeps for classification.
const (
	otherKeepLines = 50
	otherKeepLine  = 2000
)

// otherLines keeps a bounded number of the lines of standard output that were
// not events (warnings, plain error messages), for classification only.
type otherLines []string

func (o *otherLines) add(line []byte) {
	if s := strings.TrimSpace(string(line)); s != "" && len(*o) < otherKeepLines {
		*o = append(*o, truncate(s, otherKeepLine))
	}
}

func (o otherLines) String() string { return strings.Join(o, "\n") }

// eventType decodes the "type" of one JSON event line; ok is false for a line
// that is not a JSON object with a type.
func eventType(line []byte) (string, bool) {
	var ev struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &ev); err != nil || ev.Type == "" {
		return "", false
	}
	return ev.Type, true
}

// decode reads an event line into v leniently: a field of an unexpected
// type is left empty rather than losing the whole event.
func decode(line []byte, v any) bool {
	err := json.Unmarshal(line, v)
	var typeErr *json.UnmarshalTypeError
	return err == nil || errors.As(err, &typeErr)
}

// reply holds the reply text of a call, bounded to its last MaxReplyBytes.
type reply struct {
	tail *proc.Tail
	cut  bool // a line holding part of it was cut
}

func newReply() *reply { return &reply{tail: proc.NewTail(MaxReplyBytes)} }

// set replaces the text.
func (r *reply) set(s string, cut bool) {
	r.tail = proc.NewTail(MaxReplyBytes)
	r.tail.Write([]byte(s))
	r.cut = cut
}

// add appends to the text.
func (r *reply) add(s string, cut bool) {
	r.tail.Write([]byte(s))
	r.cut = r.cut || cut
}

func (r *reply) empty() bool { return r.tail.Total() == 0 }

// fill sets the text fields of a response.
func (r *reply) fill(resp *Response) {
	resp.Text = r.tail.String()
	resp.Truncated = r.cut || r.tail.Truncated()
}

// parseTime reads an event time stamp: RFC 3339 text or Unix milliseconds.
// Zero when there is none.
func parseTime(raw json.RawMessage) time.Time {
	if len(raw) == 0 {
		return time.Time{}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t
		}
		return time.Time{}
	}
	var n float64
	if json.Unmarshal(raw, &n) == nil && n > 0 {
		if n > 1e12 {
			return time.UnixMilli(int64(n))
		}
		return time.Unix(int64(n), 0)
	}
	return time.Time{}
}

// orNow is t, or the classification clock when t is zero.
func orNow(t time.Time) time.Time {
	if t.IsZero() {
		return timeNow()
	}
	return t
}

// textFailure classifies a CLI's own error message by its words; when they
// match nothing known it is still a failure, of kind otherwise.
func textFailure(msg string, now time.Time, otherwise FailureKind) *Failure {
	if f := classifyTextAt(msg, now); f != nil {
		return f
	}
	return &Failure{Kind: otherwise, Message: failureLine(msg), HTTPStatus: httpStatus(msg)}
}

// fallbackFailure classifies a failed call that gave no structured error:
// the words on standard error and the kept non-JSON output, else a crash.
func fallbackFailure(end callEnd, other otherLines) *Failure {
	if f := classifyText(end.Stderr + "\n" + other.String()); f != nil {
		return f
	}
	msg := crashMessage(end)
	if end.Stderr == "" && len(other) > 0 {
		msg += ": " + truncate(lastLine(other.String()), 300)
	}
	return &Failure{Kind: FailCrash, Message: msg}
}
