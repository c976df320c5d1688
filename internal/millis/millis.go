// Package millis is a duration in whole milliseconds: the form every
// duration has in jlgcli's JSON (the result object, the --json outputs, the
// records in .jlgcli/, the inputs and results of the Temporal workflows),
// "durationMs": 41250. Its value is that number, so that it is written and
// read as the integer it always was, and sums of durations add up the same
// milliseconds; Of and Duration are the one conversion each way to and from
// time.Duration.
package millis

import "time"

// Duration is a duration in whole milliseconds.
type Duration int64

// Of is d in whole milliseconds, rounded toward zero as
// time.Duration.Milliseconds rounds it.
func Of(d time.Duration) Duration { return Duration(d.Milliseconds()) }

// Duration is d as a time.Duration.
func (d Duration) Duration() time.Duration { return time.Duration(d) * time.Millisecond }
