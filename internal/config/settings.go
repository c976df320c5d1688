package config

import "strings"

// Setting is one key as it was resolved: its printable value and the layer
// that gave it (`jlgcli config`). An ignored setting is one of a project
// file that is not trusted (Config.Ignored): its source says so.
type Setting struct {
	Key     string `json:"key"`
	Value   string `json:"value"`
	Source  string `json:"source"`
	Ignored bool   `json:"ignored,omitempty"`
}

// Settings are every key with a value (AllKeys), each with its value and
// source, each followed by the settings of its key (or of keys under it)
// that were ignored.
func (c *Config) Settings() []Setting {
	var out []Setting
	for _, k := range c.AllKeys() {
		out = append(out, Setting{Key: k, Value: c.Value(k), Source: c.Sources[k]})
		for _, i := range c.Ignored {
			if i.Key == k || strings.HasPrefix(i.Key, k+".") {
				out = append(out, Setting{Key: i.Key, Value: i.Value, Source: i.File + " (not trusted: ignored)", Ignored: true})
			}
		}
	}
	return out
}

// EnvValue gives a run's recorded environment names their values, which
// jlgcli does not keep: a tier's from its env in c, then from c's env
// (--env, [env]), then from getenv, jlgcli's environment.
func (c *Config) EnvValue(getenv func(string) string) func(tier, name string) (string, bool) {
	return func(tier, name string) (string, bool) {
		if tier != "" {
			for _, t := range c.Tiers {
				if v, ok := t.Env[name]; ok && t.Name == tier {
					return v, true
				}
			}
			for _, p := range []*Tier{c.Planner, c.Review} {
				if p != nil && tier == p.Name {
					if v, ok := p.Env[name]; ok {
						return v, true
					}
				}
			}
		}
		if v, ok := c.Env[name]; ok {
			return v, true
		}
		v := getenv(name)
		return v, v != ""
	}
}
