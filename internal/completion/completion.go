// Package completion decides from an agent's reply whether its work is done:
// by a marker line, or by a JSON status object.
package completion

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Mode is how completion is signalled.
type Mode string

// The completion modes.
const (
	// ModeMarker: done when a line of the reply, trimmed, equals the marker.
	ModeMarker Mode = "marker"
	// ModeJSON: the last JSON object with a "status" key decides.
	ModeJSON Mode = "json"
)

// ParseMode checks a mode name.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeMarker, ModeJSON:
		return Mode(s), nil
	}
	return "", fmt.Errorf("completion mode must be %q or %q, not %q", ModeMarker, ModeJSON, s)
}

// Status is the verdict on one reply.
type Status string

// The verdicts.
const (
	Done     Status = "done"
	Continue Status = "continue"
	// Invalid: json mode and the reply holds no usable status object.
	Invalid Status = "invalid"
)

// Verdict is what a reply says about completion.
type Verdict struct {
	Status Status
	// Summary is the json object's "summary" when done.
	Summary string
	// Next is the json object's "next" prompt when continuing.
	Next string
	// Reason says why a reply is Invalid.
	Reason string
}

// Parse applies mode to reply. marker is used in marker mode only.
func Parse(reply string, mode Mode, marker string) Verdict {
	if mode == ModeJSON {
		return ParseJSON(reply)
	}
	if HasMarker(reply, marker) {
		return Verdict{Status: Done}
	}
	return Verdict{Status: Continue}
}

// HasMarker reports whether a line of reply, trimmed of spaces, equals
// marker: "Step 2 completed\nDONE" has the marker DONE, "UNDONE" has not.
func HasMarker(reply, marker string) bool {
	marker = strings.TrimSpace(marker)
	if marker == "" {
		return false
	}
	for line := range strings.Lines(reply) {
		if strings.TrimSpace(line) == marker {
			return true
		}
	}
	return false
}

// ParseJSON finds the last top-level JSON object in reply that has a
// "status" key, bare or inside a fenced code block, and reads it.
func ParseJSON(reply string) Verdict {
	obj, ok := lastStatusObject(reply)
	if !ok {
		return Verdict{Status: Invalid, Reason: `the reply holds no JSON object with a "status" key`}
	}
	var v struct {
		Status  any `json:"status"`
		Summary any `json:"summary"`
		Next    any `json:"next"`
	}
	_ = json.Unmarshal(obj, &v)
	status, _ := v.Status.(string)
	summary, _ := v.Summary.(string)
	next, _ := v.Next.(string)
	switch Status(strings.ToLower(strings.TrimSpace(status))) {
	case Done:
		return Verdict{Status: Done, Summary: summary}
	case Continue:
		return Verdict{Status: Continue, Next: next}
	}
	return Verdict{Status: Invalid, Reason: fmt.Sprintf(`the status object says "status": %s; it must be "done" or "continue"`, compact(obj, "status"))}
}

// lastStatusObject scans reply left to right for JSON objects, skipping over
// each one it decodes, and returns the last that has a "status" key.
func lastStatusObject(reply string) (json.RawMessage, bool) {
	var last json.RawMessage
	found := false
	for i := 0; i < len(reply); {
		j := strings.IndexByte(reply[i:], '{')
		if j < 0 {
			break
		}
		start := i + j
		if !mayOpenObject(reply[start+1:]) {
			i = start + 1
			continue
		}
		dec := json.NewDecoder(strings.NewReader(reply[start:]))
		var obj map[string]json.RawMessage
		if err := dec.Decode(&obj); err != nil {
			i = start + 1
			continue
		}
		if _, ok := obj["status"]; ok {
			end := start + int(dec.InputOffset())
			last, found = json.RawMessage(reply[start:end]), true
		}
		i = start + int(dec.InputOffset())
	}
	return last, found
}

// mayOpenObject reports whether rest, what follows a '{', can continue a
// JSON object: after spaces, a key's quote or the closing brace. It spares
// a decoder for every brace of prose or code.
func mayOpenObject(rest string) bool {
	t := strings.TrimLeft(rest, " \t\r\n")
	return t != "" && (t[0] == '"' || t[0] == '}')
}

func compact(obj json.RawMessage, key string) string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(obj, &m)
	return string(m[key])
}
