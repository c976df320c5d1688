package config

import (
	"os"
	"strings"
	"testing"
)

// The key table is whole: every key prints, every flag has a type and is
// bound once per command, every variable reads a value into a layer, and
// docs/configuration.md's environment list names every variable of the
// table.
func TestKeyTable(t *testing.T) {
	c, err := Resolve()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keyTable {
		if k.Name != "" && k.print == nil {
			t.Errorf("key %s does not say how it prints", k.Name)
		}
		if k.Name != "" && c.Sources[k.Name] != "default" {
			t.Errorf("key %s has no default source", k.Name)
		}
		if k.Flag != "" && (k.Kind == "" || k.parse == nil || len(k.Commands) == 0) {
			t.Errorf("flag --%s: kind %q, parse %v, commands %v", k.Flag, k.Kind, k.parse != nil, k.Commands)
		}
		if k.Env != "" && k.parse == nil {
			t.Errorf("variable %s cannot be read", k.Env)
		}
	}
	for _, cmd := range []string{cmdRun, cmdLoop, cmdTask, cmdBatch, cmdConfig} {
		seen := map[string]bool{}
		for _, k := range keyTable {
			if _, _, ok := k.Use(cmd); ok {
				if seen[k.Flag] || (k.Short != "" && seen["-"+k.Short]) {
					t.Errorf("%s: --%s bound twice", cmd, k.Flag)
				}
				seen[k.Flag] = true
				if k.Short != "" {
					seen["-"+k.Short] = true
				}
			}
		}
	}
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keyTable {
		if k.Env != "" && !strings.Contains(string(doc), "`"+k.Env+"`") {
			t.Errorf("docs/configuration.md does not list %s in its environment variables", k.Env)
		}
	}
	if u, d, ok := keyTable[3].Use(cmdTask); !ok || d != "30m0s" || !strings.Contains(u, "of the task") {
		t.Errorf("task's --timeout: %q %q %v", u, d, ok)
	}
}
