package runs

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/report"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/temporal"
)

var updateRecords = flag.Bool("update-records", false, "write testdata/records.json from the types as they are")

// records are the values whose JSON is a contract: the records kept in
// .jlgcli/, the --json outputs, the reports, the hooks' events, and the
// inputs and results of the Temporal workflows, kept in their histories.
func records() map[string]any {
	return map[string]any{
		"engine.Result":          &engine.Result{},
		"engine.Checkpoint":      &engine.Checkpoint{},
		"engine.WaitData":        &engine.WaitData{},
		"engine.StopData":        &engine.StopData{},
		"engine.TaskResult":      &taskengine.Result{},
		"engine.TaskStart":       &taskengine.TaskStart{},
		"engine.TaskWait":        &taskengine.TaskWait{},
		"engine.TaskCheckpoint":  &taskengine.Checkpoint{},
		"engine.AttemptOutcome":  &taskengine.AttemptOutcome{},
		"engine.Policy":          &taskengine.Policy{},
		"engine.History":         &taskengine.History{},
		"gate.Report":            &gate.Report{},
		"local.LoopSpec":         &local.LoopSpec{},
		"local.TaskSpec":         &local.TaskSpec{},
		"local.BatchSpec":        &local.BatchSpec{},
		"local.PRSpec":           &local.PRSpec{},
		"local.PRResult":         &local.PRResult{},
		"local.PRStartData":      &local.PRStartData{},
		"local.PRLookData":       &local.PRLookData{},
		"local.PRRoundData":      &local.PRRoundData{},
		"local.PRRoundEndData":   &local.PRRoundEndData{},
		"local.PRMergeData":      &local.PRMergeData{},
		"local.PREndData":        &local.PREndData{},
		"batch.Summary":          &batch.Summary{},
		"batch.Result":           &batch.Result{},
		"store.Meta":             &store.Meta{},
		"store.Progress":         &store.Progress{},
		"store.RunRow":           &store.RunRow{},
		"hooks.Event":            &hooks.Event{},
		"hooks.Answer":           &hooks.Answer{},
		"report.Report":          &report.Report{},
		"report.Summary":         &report.Summary{},
		"runs.Usage":             &Usage{},
		"temporal.TaskInput":     &temporal.TaskInput{},
		"temporal.BatchInput":    &temporal.BatchInput{},
		"temporal.AttemptInput":  &temporal.AttemptInput{},
		"temporal.Planned":       &temporal.Planned{},
		"temporal.FinishInput":   &temporal.FinishInput{},
		"temporal.Finished":      &temporal.Finished{},
		"temporal.LandInput":     &temporal.LandInput{},
		"temporal.Progress":      &temporal.Progress{},
		"temporal.PreviousInput": &temporal.PreviousInput{},
		"temporal.PRInput":       &temporal.PRInput{},
		"temporal.PRState":       &temporal.PRState{},
	}
}

// TestRecordsJSON: every field of the records set, their JSON is what
// testdata/records.json holds, written by the types as they were when it was
// made (the names and units of every field: durations in milliseconds, the
// report's snake_case git section...), and what it holds reads back to the
// same JSON, as a record written by an earlier version must.
func TestRecordsJSON(t *testing.T) {
	got := map[string]json.RawMessage{}
	for name, v := range records() {
		fill(reflect.ValueOf(v).Elem(), 0)
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got[name] = b
	}
	path := filepath.Join("testdata", "records.json")
	names := slices.Sorted(maps.Keys(got))
	if *updateRecords {
		// One record a line, so that a change shows as the record's line.
		var b bytes.Buffer
		b.WriteString("{\n")
		for i, name := range names {
			k, _ := json.Marshal(name)
			fmt.Fprintf(&b, "%s: %s", k, got[name])
			if i < len(names)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("}\n")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		w, ok := want[name]
		if !ok {
			t.Errorf("%s: not in %s", name, path)
			continue
		}
		if !jsonEqual(t, w, got[name]) {
			t.Errorf("%s: its JSON changed:\nwas  %s\nnow  %s", name, compact(w), got[name])
		}
		// The record as it was written reads back to the same JSON.
		v := reflect.New(reflect.TypeOf(records()[name]).Elem()).Interface()
		if err := json.Unmarshal(w, v); err != nil {
			t.Errorf("%s: the record as it was written does not read: %v", name, err)
			continue
		}
		back, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(t, w, back) {
			t.Errorf("%s: the record as it was written reads back otherwise:\nwas  %s\nnow  %s", name, compact(w), back)
		}
	}
}

// jsonEqual compares two JSON texts byte for byte once compacted: the
// order of the fields counts.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	return bytes.Equal(compact(a), compact(b))
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}

// fill gives every exported field of v a value that is not zero, so that
// every field is written (omitempty ones too): strings "s", numbers 7,
// booleans true, times a fixed instant, one element in slices and maps.
func fill(v reflect.Value, depth int) {
	if depth > 8 || !v.CanSet() {
		return
	}
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)))
		return
	case reflect.TypeFor[json.RawMessage]():
		v.SetBytes([]byte(`{"raw":1}`))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("s")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.25)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}
