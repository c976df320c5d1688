package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/completion"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Resolve applies the layers in order over the defaults and validates the
// result.
func Resolve(layers ...*Layer) (*Config, error) {
	c := &Config{
		MaxIterations:   DefaultMaxIterations,
		Timeout:         DefaultTimeout,
		CompletionMode:  completion.ModeMarker,
		Marker:          DefaultMarker,
		NoProgressLimit: DefaultNoProgressLimit,
		Session:         engine.SessionFresh,
		StallTimeout:    DefaultStallTimeout,
		MaxWait:         DefaultMaxWait,
		Premature:       Premature{Enabled: true},
		Env:             map[string]string{},
		Backends:        map[string]agent.CommandSpec{},
		Attempts:        DefaultAttempts,
		BudgetUSD:       DefaultBudgetUSD,
		EscalateFrom:    taskengine.EscalateFromBase,
		AntiGaming:      gate.GamingRefuse,
		LoopDetection:   LoopDetection{Similarity: DefaultSimilarity, SameErrorCount: DefaultSameErrorCount},
		Commit:          git.CommitBranch,
		Merge:           git.MergeSquash,
		Jobs:            DefaultJobs,
		HookTimeout:     hooks.DefaultTimeout,
		Notify:          true,
		Temporal:        Temporal{Namespace: DefaultTemporalNamespace, TaskQueue: DefaultTaskQueue, WorkerWait: DefaultWorkerWait},
		Sources:         map[string]string{},
	}
	for _, k := range Keys {
		c.Sources[k] = "default"
	}
	attempts := 0 // the --attempts override
	var pe projectEnv
	for _, l := range layers {
		if l == nil {
			continue
		}
		if err := c.apply(l); err != nil {
			return nil, err
		}
		if l.Attempts != nil {
			attempts = *l.Attempts
		}
		pe.add(l)
	}
	c.Sandbox.ProjectEnv = pe.names()
	// Tiers inherit the backend once every layer has had its say.
	for i := range c.Tiers {
		if c.Tiers[i].Backend == "" {
			c.Tiers[i].Backend = c.Backend
		}
		if attempts > 0 {
			c.Tiers[i].Attempts = attempts
		}
	}
	if attempts > 0 {
		c.Attempts = attempts
	}
	if c.Planner != nil && c.Planner.Backend == "" {
		c.Planner.Backend = c.Backend
	}
	if c.Review != nil && c.Review.Backend == "" {
		c.Review.Backend = c.Backend
	}
	return c, nil
}

func (c *Config) apply(l *Layer) error {
	bad := func(key, msg string) error { return &Error{Source: l.Name, Key: key, Msg: msg} }
	set := func(key string) { c.Sources[key] = l.Name }
	for _, k := range keyTable {
		if k.apply == nil {
			continue
		}
		dst := c
		if l.untrusted() && needsTrust(k.Name, l) {
			// Checked as any value, but not honoured.
			scratch := *c
			dst = &scratch
		}
		if ok, err := k.apply(dst, l); err != nil {
			e := &Error{Source: l.Name, Key: k.Name, Msg: err.Error()}
			if k.Lined {
				e.Line = l.line(k.Name)
			}
			return e
		} else if ok && dst != c {
			c.ignore(l, k.Name, k.print(dst))
		} else if ok {
			set(k.Name)
		}
	}
	if len(l.Env) > 0 {
		if err := checkEnv(l.Env, "env", bad); err != nil {
			return err
		}
		maps.Copy(c.Env, l.Env)
		set("env")
	}
	if len(l.Checks) > 0 || len(l.ShellChecks) > 0 {
		// Checks of a higher layer replace those of a lower one.
		c.Checks = nil
		for i, ch := range l.Checks {
			key := fmt.Sprintf("checks[%d]", i)
			if len(ch.Run) == 0 || ch.Run[0] == "" {
				return bad(key+".run", "must be a non-empty list: the program and its arguments")
			}
			timeout := DefaultCheckTimeout
			if ch.Timeout != "" {
				d, err := ParseDuration(ch.Timeout)
				if err != nil {
					return bad(key+".timeout", err.Error())
				}
				if d <= 0 {
					return bad(key+".timeout", fmt.Sprintf("%q: want a duration greater than 0", ch.Timeout))
				}
				timeout = d
			}
			name := ch.Name
			if name == "" {
				name = strings.Join(ch.Run, " ")
			}
			c.Checks = append(c.Checks, Check{Name: name, Run: ch.Run, Timeout: timeout})
		}
		for _, sh := range l.ShellChecks {
			if strings.TrimSpace(sh) == "" {
				return bad("checks", "--check needs a command line")
			}
			c.Checks = append(c.Checks, Check{Name: sh, Shell: sh, Timeout: DefaultCheckTimeout})
		}
		set("checks")
	}
	for i, h := range l.Hooks {
		if key, msg := h.Check(); key != "" {
			e := &Error{Source: l.Name, Key: fmt.Sprintf("hooks[%d].%s", i, key), Msg: msg}
			e.Line = l.line(e.Key)
			return e
		}
		if l.untrusted() {
			c.ignore(l, "hooks", hookValue(h))
			continue
		}
		c.Hooks = append(c.Hooks, h)
		set("hooks")
	}
	if p := l.Premature; p != nil {
		if p.Enabled != nil {
			c.Premature.Enabled = *p.Enabled
		}
		if p.Phrases != nil {
			c.Premature.Phrases = p.Phrases
		}
		if p.Negations != nil {
			c.Premature.Negations = p.Negations
		}
		set("prematureStop")
	}
	for name, b := range l.Backends {
		key := "backends." + name
		if b.WindowLimit != nil {
			if err := checkWindowLimit(*b.WindowLimit); err != nil {
				return bad(key+".windowLimit", err.Error())
			}
			if c.WindowLimits == nil {
				c.WindowLimits = map[string]float64{}
			}
			c.WindowLimits[name] = *b.WindowLimit
			c.Sources[key+".windowLimit"] = l.Name
			if agent.IsBuiltin(name) && len(b.Command) == 0 && b.Prompt == "" {
				continue // a built-in backend's own limit, nothing else
			}
		}
		if agent.IsBuiltin(name) {
			return bad(key, fmt.Sprintf("%s is a built-in backend; give your command backend another name", name))
		}
		if len(b.Command) == 0 || b.Command[0] == "" {
			return bad(key+".command", "must be a non-empty list: the program and its arguments")
		}
		switch b.Prompt {
		case "":
			b.Prompt = agent.PromptStdin
		case agent.PromptStdin, agent.PromptArg, agent.PromptFile:
		default:
			return bad(key+".prompt", fmt.Sprintf("must be %q, %q or %q, not %q", agent.PromptStdin, agent.PromptArg, agent.PromptFile, b.Prompt))
		}
		c.Backends[name] = agent.CommandSpec{Command: b.Command, Prompt: b.Prompt}
		c.Sources[key] = l.Name
	}
	return c.applyTask(l, set)
}

// applyTask applies the keys of the task command. Their errors have the
// line of the key in its file.
func (c *Config) applyTask(l *Layer, set func(key string)) error {
	bad := func(key, msg string) error { return &Error{Source: l.Name, Line: l.line(key), Key: key, Msg: msg} }
	if len(l.Tiers) > 0 {
		// Tiers of a higher layer replace those of a lower one.
		c.Tiers = nil
		seen := map[string]int{}
		for i, t := range l.Tiers {
			key := fmt.Sprintf("tiers[%d]", i)
			if err := checkTierName(t.Name); err != nil {
				return bad(key+".name", err.Error())
			}
			if j, ok := seen[t.Name]; ok {
				return bad(key+".name", fmt.Sprintf("%q is already the name of tiers[%d]", t.Name, j))
			}
			seen[t.Name] = i
			if err := checkEnv(t.Env, key+".env", bad); err != nil {
				return err
			}
			attempts := DefaultAttempts
			if t.Attempts != nil {
				if *t.Attempts < 1 {
					return bad(key+".attempts", fmt.Sprintf("must be at least 1, not %d", *t.Attempts))
				}
				attempts = *t.Attempts
			}
			c.Tiers = append(c.Tiers, Tier{Name: t.Name, Backend: strings.TrimSpace(t.Backend), Model: t.Model, Env: maps.Clone(t.Env), Attempts: attempts})
		}
		set("tiers")
	}
	if l.Attempts != nil && *l.Attempts < 1 {
		return bad("attempts", fmt.Sprintf("must be at least 1, not %d", *l.Attempts))
	}
	if p := l.Planner; p != nil {
		if err := checkEnv(p.Env, "planner.env", bad); err != nil {
			return err
		}
		c.Planner = &Tier{Name: "planner", Backend: strings.TrimSpace(p.Backend), Model: p.Model, Env: maps.Clone(p.Env), Attempts: 1}
		set("planner")
	}
	if r := l.Review; r != nil {
		if err := checkEnv(r.Env, "review.env", bad); err != nil {
			return err
		}
		c.Review = &Tier{Name: "review", Backend: strings.TrimSpace(r.Backend), Model: r.Model, Env: maps.Clone(r.Env), Attempts: 1}
		if c.Review.Backend == ReviewNone {
			c.Review = nil
		}
		set("review")
	}
	if len(l.Prices) > 0 {
		t, err := cost.ParseTable(l.Prices)
		if err != nil {
			return bad(pricesErrorKey(l.Prices), strings.ReplaceAll(err.Error(), "prices: ", ""))
		}
		c.Prices = c.Prices.Merge(t)
		for k := range c.Sources {
			if m, ok := strings.CutPrefix(k, "prices."); ok {
				if _, kept := c.Prices[m]; !kept {
					delete(c.Sources, k) // replaced by another spelling
				}
			}
		}
		for m := range t {
			c.Sources["prices."+m] = l.Name
		}
		set("prices")
	}
	if ld := l.LoopDetection; ld != nil {
		if ld.Similarity != nil {
			if v := *ld.Similarity; !(v > 0 && v <= 1) {
				return bad("loopDetection.similarity", fmt.Sprintf("must be more than 0 and at most 1, not %v", v))
			}
			c.LoopDetection.Similarity = *ld.Similarity
		}
		if ld.SameErrorCount != nil {
			if n := *ld.SameErrorCount; n < 2 {
				return bad("loopDetection.sameErrorCount", fmt.Sprintf("must be at least 2, not %d", n))
			}
			c.LoopDetection.SameErrorCount = *ld.SameErrorCount
		}
		if e := ld.Embeddings; e != nil {
			// Embeddings of a higher layer replace those of a lower one.
			emb, key, msg := resolveEmbeddings(e)
			switch {
			case emb == nil:
				return bad("loopDetection.embeddings."+key, msg)
			case l.untrusted():
				c.ignore(l, "loopDetection.embeddings", embeddingsValue(emb))
			default:
				c.LoopDetection.Embeddings = emb
			}
		}
		set("loopDetection")
	}
	return nil
}

// projectEnv follows, over the layers, which variables of the agents' and
// checks' environment a project file set: those of [env] that no layer
// above set again, and every one of the tiers' and the planner's env when
// the tiers or the planner resolved are the project file's.
type projectEnv struct {
	env                    map[string]bool // [env]: true while the project file's value holds
	tiers, planner, review []string
}

// add follows layer l, applied.
func (p *projectEnv) add(l *Layer) {
	for k := range l.Env {
		if p.env == nil {
			p.env = map[string]bool{}
		}
		p.env[k] = l.Project
	}
	if len(l.Tiers) > 0 { // they replace those below
		p.tiers = nil
		for _, t := range l.Tiers {
			if l.Project {
				p.tiers = slices.AppendSeq(p.tiers, maps.Keys(t.Env))
			}
		}
	}
	if l.Planner != nil {
		p.planner = nil
		if l.Project {
			p.planner = slices.AppendSeq(p.planner, maps.Keys(l.Planner.Env))
		}
	}
	if l.Review != nil {
		p.review = nil
		if l.Project {
			p.review = slices.AppendSeq(p.review, maps.Keys(l.Review.Env))
		}
	}
}

// names are the variables a project file set, sorted; nil: none.
func (p *projectEnv) names() []string {
	names := slices.Concat(p.tiers, p.planner, p.review)
	for k, project := range p.env {
		if project {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// resolveEmbeddings validates a [loopDetection.embeddings] table; when it is
// wrong, emb is nil and key and msg say why.
func resolveEmbeddings(e *embeddingsFile) (emb *Embeddings, key, msg string) {
	u, err := url.Parse(e.URL)
	switch {
	case e.URL == "":
		return nil, "url", "is required: the embeddings service's http or https URL"
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, "url", fmt.Sprintf("%q is not an http or https URL", e.URL)
	case strings.TrimSpace(e.Model) == "":
		return nil, "model", "is required: the embeddings model"
	case e.APIKeyEnv != "" && !validEnvName(e.APIKeyEnv):
		return nil, "apiKeyEnv", fmt.Sprintf("%q is not an environment variable name", e.APIKeyEnv)
	}
	threshold := DefaultEmbeddingsThreshold
	if e.Threshold != nil {
		if v := *e.Threshold; !(v > 0 && v <= 1) {
			return nil, "threshold", fmt.Sprintf("must be more than 0 and at most 1, not %v", v)
		}
		threshold = *e.Threshold
	}
	return &Embeddings{URL: e.URL, Model: strings.TrimSpace(e.Model), APIKeyEnv: e.APIKeyEnv, Threshold: threshold}, "", ""
}

// pricesErrorKey is the key of a bad [prices] table: the model's, when one
// model is wrong by itself.
func pricesErrorKey(prices map[string]map[string]float64) string {
	var badModels []string
	for _, m := range slices.Sorted(maps.Keys(prices)) {
		if _, err := cost.ParseTable(map[string]map[string]float64{m: prices[m]}); err != nil {
			badModels = append(badModels, m)
		}
	}
	if len(badModels) == 1 {
		return "prices." + badModels[0]
	}
	return "prices"
}

// checkTierName says what is wrong with a tier's name.
func checkTierName(name string) error {
	if name == "" {
		return errors.New("is required")
	}
	if len(name) > 40 {
		return fmt.Errorf("%q is longer than 40 characters", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:-", r)) {
			return fmt.Errorf("%q has %q: a name has only letters, digits and . _ : -", name, r)
		}
	}
	return nil
}

// checkEnv checks the names of an env table.
func checkEnv(env map[string]string, key string, bad func(key, msg string) error) error {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return bad(key, fmt.Sprintf("%q is not a valid variable name", k))
		}
	}
	return nil
}

// validEnvName reports whether s is a portable environment variable name.
func validEnvName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}
