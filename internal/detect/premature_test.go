package detect

import (
	"strings"
	"testing"
)

type prematureCase struct {
	reply  string
	phrase string // the phrase expected to fire; "" for a negative case
}

// The cases: at least 15 positive and 15 negative in each language.
var (
	englishPositive = []prematureCase{
		{"Implemented the flag.\n\nNext steps:\n- add tests\n- update the README\n\nDONE", "next steps"},
		{"Remaining tasks: write the docs.\nDONE", "remaining task*"},
		{"I will update the README later.\nDONE", "i will … later"},
		{"I'll handle the edge cases later on.\nDONE", "i ll … later"},
		{"The parser works. The integration tests still need to be written.\nDONE", "still need"},
		{"There is still some work left to do on the CLI.", "left to do"},
		{"Error handling will be added later.", "will be … later"},
		{"This can be done in a follow-up PR.\nDONE", "in a follow up"},
		{"TODO: wire the flag into main.\nDONE", "todo :"},
		{"The export command is not yet implemented.\nDONE", "not yet implemented"},
		{"Afterwards, I will add the migration.\nDONE", "afterwards"},
		{"Next, I'll add caching.\nDONE", "next i ll"},
		{"There are no remaining tasks in the parser, but the docs still need work.\nDONE", "still need"},
		{"## Remaining work\n- benchmarks\n\nDONE", "remaining work"},
		{"I haven't updated the changelog yet.\nDONE", "haven t … yet"},
		{"Pending tasks: deploy to staging.\nDONE", "pending task*"},
		{"NEXT STEPS: PROFILE IT.\nDONE", "next steps"},
		{"Done with parsing; next steps are the printer and the docs.\nDONE", "next steps"},
		{"```go\n// Next steps: none, this is code\nfunc f() {}\n```\nNext steps: profile it.\nDONE", "next steps"},
		{"**Next steps**\n1. Add tests for the parser (nothing else is missing)\nDONE", "next steps"},
		{`{"status":"done","summary":"Added the flag. Next step: document it."}`, "next step"},
		{"Everything compiles. Subsequently we should add metrics.\nDONE", "subsequently"},
		{"The remaining tasks are listed in TODO.md.\nDONE", "remaining task*"},
		{"I fixed the parser, and the remaining work will be done tomorrow.\nDONE", "remaining work"},
	}
	englishNegative = []string{
		"All tests pass.\nDONE",
		"There are no remaining tasks.\nDONE",
		"No next steps: everything is implemented and tested.\nDONE",
		"Nothing left to do.\nDONE",
		"```\n# next steps: run make\nTODO: this is a code block\n```\nDONE",
		"I renamed `remainingTasks` to `pending` and removed `nextSteps()`.\nDONE",
		"> Next steps: add tests\n\nI added the tests you asked for above.\nDONE",
		"Removed nextsteps.go and the laterally scrolling table. I will keep it simple.\nDONE",
		"Afterwards I ran the full test suite and it passed.\nDONE",
		"I followed the following steps: read, edit, test.\nDONE",
		"## Next steps\nNone.\nDONE",
		"Remaining tasks: none.\nDONE",
		"All remaining tasks are complete.\nDONE",
		"The parser then calls the next stage, which later merges the results.\nDONE",
		"The function updates the TODO items of the tracker.\nDONE",
		"There isn't any remaining work.\nDONE",
		"~~~\nI will do this later\n~~~\nDONE",
		"Updated the to-do list component and its pending-state styling.\nDONE",
		"DONE",
		"",
		"I completed the remaining tasks and ran the tests.\nDONE",
		"- Completed the remaining work items.\nDONE",
		"We have addressed the pending items.\nDONE",
		"Summary:\n1. Finished the remaining steps of the migration.\nDONE",
	}

	frenchPositive = []prematureCase{
		{"Prochaines étapes : ajouter les tests.\nDONE", "prochaine* étape*"},
		{"Prochaine etape : documenter l'API.\nDONE", "prochaine* étape*"},
		{"Tâches restantes : la documentation.\nDONE", "tâche* restante*"},
		{"Il reste des tests à écrire.\nDONE", "il reste des"},
		{"Il reste à mettre à jour le README.\nDONE", "il reste à"},
		{"Reste à faire : la migration.\nDONE", "reste* à faire"},
		{"Ensuite, je vais ajouter la pagination.\nDONE", "ensuite"},
		{"Je ferai la documentation plus tard.\nDONE", "plus tard"},
		{"La gestion des erreurs n'est pas encore implémentée.\nDONE", "pas encore"},
		{"Dans un second temps, il faudra optimiser les requêtes.\nDONE", "dans un second temps"},
		{"Par la suite, nous ajouterons un cache.\nDONE", "par la suite"},
		{"Il faudrait aussi mettre à jour le changelog.\nDONE", "il faudrait"},
		{"Il reste 3 tests en échec.\nDONE", "il reste #"},
		{"PROCHAINES ÉTAPES\n- la doc\nDONE", "prochaine* étape*"},
		{"Il n'y a plus de bug bloquant, mais il reste des avertissements.\nDONE", "il reste des"},
		{"Les étapes suivantes sont : ajouter X et Y.\nDONE", "étape* suivante*"},
		{"Tâches à faire : tests d'intégration.\nDONE", "tâche* à faire"},
		{"Je m'occuperai des tests ultérieurement.\nDONE", "ultérieurement"},
		{"## Étapes restantes\n- la doc\nDONE", "étape* restante*"},
		{"Les tests d'intégration restent à faire.\nDONE", "reste* à faire"},
		{"J’ai corrigé le parseur ; il me reste la CLI.\nDONE", "il me reste"},
		{"Il n'a pas encore été testé sur Windows.\nDONE", "pas encore"},
		{"Tâches restantes : la documentation de l'API, que je ferai demain.\nDONE", "tâche* restante*"},
	}
	frenchNegative = []string{
		"Tous les tests passent.\nDONE",
		"Il ne reste rien à faire.\nDONE",
		"Rien ne reste à faire.\nDONE",
		"Plus rien à faire.\nDONE",
		"Aucune tâche restante.\nDONE",
		"Pas de prochaines étapes.\nDONE",
		"J'ai d'abord lu le code, ensuite j'ai corrigé le bug.\nDONE",
		"Le cache reste valide après un redémarrage.\nDONE",
		"Les fichiers restent inchangés.\nDONE",
		"Prochaines étapes : aucune.\nDONE",
		"```\n# prochaines étapes : à faire\n```\nDONE",
		"J'ai renommé `tachesRestantes` et `plusTard()`.\nDONE",
		"> Il reste des tests à écrire\n\nC'est fait : les tests sont écrits.\nDONE",
		"La suite de tests passe entièrement.\nDONE",
		"L'affaire est réglée.\nDONE",
		"Il reste compatible avec l'ancienne API.\nDONE",
		"Tout ce qui était à faire a été fait.\nDONE",
		"Le calcul est plus tardif qu'avant, mais correct.\nDONE",
		"Ensuite, les tests ont été ajoutés et passent.\nDONE",
		"## Tâches restantes\nAucune, tout est terminé.\nDONE",
		"J'ai terminé les tâches restantes.\nDONE",
		"Les corrections restantes ont été appliquées.\nDONE",
	}
)

func TestPrematureEnglish(t *testing.T) { runCases(t, englishPositive, englishNegative) }
func TestPrematureFrench(t *testing.T)  { runCases(t, frenchPositive, frenchNegative) }

func runCases(t *testing.T, pos []prematureCase, neg []string) {
	t.Helper()
	if len(pos) < 15 || len(neg) < 15 {
		t.Fatalf("%d positive and %d negative cases, want at least 15 of each", len(pos), len(neg))
	}
	p := DefaultPremature()
	for _, tc := range pos {
		f, ok := p.Check(tc.reply)
		if !ok {
			t.Errorf("not detected:\n%s", tc.reply)
			continue
		}
		if f.Phrase != tc.phrase {
			t.Errorf("phrase %q, want %q (excerpt %q) in:\n%s", f.Phrase, tc.phrase, f.Excerpt, tc.reply)
		}
		if f.Excerpt == "" || f.Line < 1 {
			t.Errorf("finding %+v has no excerpt or line", f)
		}
	}
	for _, reply := range neg {
		if f, ok := p.Check(reply); ok {
			t.Errorf("detected %q (excerpt %q, line %d) in:\n%s", f.Phrase, f.Excerpt, f.Line, reply)
		}
	}
}

func TestPrematureFinding(t *testing.T) {
	p := DefaultPremature()
	f, ok := p.Check("Implemented X.\n\nI fixed `a.b()`. I will tidy the `cmd` package later. Then it is done.\nDONE")
	if !ok || f.Line != 3 || f.Excerpt != "I will tidy the `cmd` package later." {
		t.Errorf("%+v, %v: want line 3 and the sentence with its code", f, ok)
	}
	f, _ = p.Check("## Next steps\n- Add benchmarks.\n")
	if f.Excerpt != "## Next steps - Add benchmarks." || f.Line != 1 {
		t.Errorf("heading finding %+v: want the heading and the next line", f)
	}
	f, _ = p.Check("Remaining work: " + strings.Repeat("ééé ", 200))
	if len(f.Excerpt) > MaxExcerpt || !strings.HasSuffix(f.Excerpt, "…") || !strings.HasPrefix(f.Excerpt, "Remaining work:") {
		t.Errorf("excerpt of %d bytes: %q", len(f.Excerpt), f.Excerpt[:40])
	}
}

func TestPrematureAccentsBothWays(t *testing.T) {
	p := Premature{Phrases: []string{"prochaines etapes", "tâches"}}
	for _, reply := range []string{"Prochaines étapes", "PROCHAINES ETAPES", "prochaines e\u0301tapes", "Les taches"} {
		if _, ok := p.Check(reply); !ok {
			t.Errorf("%q not detected", reply)
		}
	}
	if _, ok := p.Check("prochaines etapesX"); ok {
		t.Error("matched inside a word")
	}
}

func TestPrematureCustom(t *testing.T) {
	p := NewPremature([]string{"à voir", "FIXME"}, []string{"déjà vu"})
	if len(p.Deferrals) != 0 || len(p.Past) == 0 {
		t.Errorf("NewPremature: %+v", p)
	}
	for reply, want := range map[string]bool{
		"Le reste est à voir.":                  true,
		"FIXME the parser":                      true,
		"Next steps: none of the built-in ones": false,
		"Ensuite, je vais ajouter X.":           false,
		"Déjà vu, donc plus à voir.":            true, // another clause
		"Plus à voir : déjà vu.":                false,
	} {
		if _, ok := p.Check(reply); ok != want {
			t.Errorf("Check(%q) = %v, want %v", reply, ok, want)
		}
	}
	if _, ok := (Premature{}).Check("next steps"); ok {
		t.Error("an empty Premature found something")
	}
	if p := NewPremature(nil, nil); len(p.Phrases) != len(DefaultPremature().Phrases) {
		t.Error("NewPremature(nil, nil) is not the default")
	}
}

func TestPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern, text string
		want          bool
	}{
		{"next step*", "next stepping stones", true},
		{"*ed", "it worked", true},
		{"*ed", "ed", false},
		{"il reste #", "il reste 12 tests", true},
		{"il reste #", "il reste douze tests", false},
		{"todo :", "TODO : x", true},
		{"todo :", "TODO x", false},
		{"i will … later", "I will, if needed, do it later.", true},
		{"i will … later", "I will do it. Later, maybe.", false},
		{"i will ... later", "i will do it later", true},
		{"follow-up", "a follow up", true},
		{"I'll", "i’ll", true},
		{"^ fixed", "Fixed it", true},
		{"^ fixed", "I fixed it", false},
		{"^ fixed", "Done. Fixed it", true},
		{"^ fixed", "1. Fixed it", true},
	} {
		p := Premature{Phrases: []string{tc.pattern}}
		if _, ok := p.Check(tc.text); ok != tc.want {
			t.Errorf("%q in %q: %v, want %v", tc.pattern, tc.text, ok, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	if err := DefaultPremature().Validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
	for _, tc := range []struct {
		p    Premature
		want string
	}{
		{Premature{Phrases: []string{"ok", "  "}}, "phrases[1]: empty pattern"},
		{Premature{Negations: []string{"…"}}, "negations[0]: empty pattern"},
		{Premature{Phrases: []string{"a*b"}}, "phrases[0]:"},
		{Premature{Past: []string{"*"}}, "past[0]:"},
		{Premature{Future: []string{"x#"}}, "future[0]:"},
		{Premature{Deferrals: []string{"a ^b"}}, "deferrals[0]:"},
	} {
		err := tc.p.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want %s…", tc.p, err, tc.want)
		}
	}
}

func TestContinuePrompt(t *testing.T) {
	p := ContinuePrompt(Finding{Phrase: "next steps", Excerpt: "Next steps: add tests.", Line: 3})
	for _, want := range []string{"says the task is done", "> Next steps: add tests.", "Do that work now", "only then say the task is done"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
}

func TestMaskCode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a `b` c", "a \x01\x01\x01 c"},
		{"a ``b`c`` d", "a \x01\x01\x01\x01\x01\x01\x01 d"},
		{"unmatched ` tick", "unmatched ` tick"},
		{"no code", "no code"},
	} {
		if got, _ := maskCode(tc.in, nil); got != tc.want {
			t.Errorf("maskCode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
