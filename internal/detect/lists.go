package detect

// The built-in lists of DefaultPremature. Bare words that are too common in
// narration or in explanations of code are left out or narrowed: "then" and
// "later" alone (seed 002 lists them; "if … then" and "later in the file"
// are everywhere), "il reste" alone ("il reste compatible" means "it stays
// compatible"), "not yet" alone ("if the file does not yet exist"), and
// "reste" alone, which never fires, nor does "restent" ("les fichiers
// restent inchangés") except in "restent à faire".
var (
	englishPhrases = []string{
		"next step", "next steps",
		"task to do", "tasks to do", "task to complete", "tasks to complete",
		"still need", "still needs", "still have to", "still has to", "still to do", "still to be",
		"left to do", "left to implement", "left to be done", "left for later", "leave … for later",
		"to do later", "to be … later", "will be … later",
		"i will … later", "i ll … later", "we will … later", "we ll … later",
		"next i will", "next i ll", "next we will", "next we ll",
		"then i will", "then i ll", "then we will", "then we ll",
		"in a follow up", "follow up pr", "follow up task*", "follow up work",
		"in a future", "in a later", "in a subsequent", "in a separate pr", "in the next iteration", "future work",
		"todo :", "todos :", "to do :", "fixme :",
		"not yet implemented", "not implemented yet", "not yet done", "not done yet",
		"not yet finished", "not finished yet", "not yet complete", "not complete yet",
		"haven t … yet", "have not … yet", "hasn t … yet", "has not … yet",
		"postpone*",
	}
	englishDeferrals = []string{
		"afterwards", "subsequently", "following step", "following steps",
		"remaining task*", "remaining work", "remaining step*", "remaining item*", "remaining todo*",
		"pending task*", "pending work", "pending item*",
		"outstanding task*", "outstanding work", "outstanding item*",
	}
	englishNegations = []string{
		"no next step", "no next steps", "no remaining", "no further", "no more", "no outstanding", "no pending",
		"no follow up", "no todo*", "no longer", "no need",
		"nothing left", "nothing remains", "nothing remaining", "nothing else", "nothing more", "nothing further",
		"nothing is left", "nothing to do",
		"there are no", "there is no", "none",
		"not any", "aren t any", "isn t any", "don t have any", "do not have any", "without any",
		"all remaining", "all the remaining", "not needed", "not required",
	}
	// englishPast marks narration for deferrals: "Afterwards I ran the
	// tests", "Completed the remaining tasks". A word in -ed counts after a
	// subject or at the start of a sentence only: "the remaining tasks are
	// listed in TODO.md" announces them.
	englishPast = []string{
		"^ *ed", "i *ed", "we *ed", "i also *ed", "we also *ed", "i then *ed", "we then *ed",
		"i have *ed", "we have *ed", "i ve", "we ve", "i had", "we had", "has been", "have been", "was", "were", "did",
		"^ ran", "^ wrote", "^ made", "^ built", "^ found", "^ did", "^ went", "^ set up", "^ put",
		"i ran", "we ran", "i wrote", "we wrote", "i made", "we made", "i built", "we built", "i found", "we found",
		"i got", "we got", "i saw", "we saw", "i took", "we took", "i went", "we went", "i began", "we began",
		"i kept", "we kept", "i sent", "we sent", "i put", "we put", "i did", "we did", "i set", "we set",
	}
	englishFuture = []string{
		"will", "ll", "need", "needs", "should", "must", "going to", "have to", "has to", "todo", "later",
	}

	frenchPhrases = []string{
		"prochaine* étape*", "prochaine* action*",
		"tâche* à faire", "tâche* à compléter", "tâche* à réaliser",
		"reste* à faire", "il reste à", "il reste encore", "il reste des", "il reste du", "il reste de", "il reste d",
		"il reste un", "il reste une", "il reste quelques", "il reste plusieurs", "il reste #",
		"il me reste", "il nous reste",
		"il faudra", "il faudrait", "il faut encore",
		"plus tard", "ultérieurement", "pas encore",
		"dans une prochaine", "lors d une prochaine", "prochaine itération", "prochaine session",
		"à compléter", "à finaliser", "à implémenter",
	}
	frenchDeferrals = []string{
		"ensuite", "par la suite", "dans un second temps", "étape* suivante*", "action* suivante*", "à faire",
		"tâche* restante*", "étape* restante*", "travail restant", "travaux restants",
		"point* restant*", "élément* restant*", "correction* restante*", "tâche* en attente",
	}
	frenchNegations = []string{
		"rien ne reste", "ne reste rien", "ne reste plus", "plus rien", "rien à faire", "rien d autre", "rien de plus",
		"aucun", "aucune", "pas de prochaine*", "pas d étape*", "pas de tâche*", "pas de travail", "pas d autre*",
		"sans tâche*", "néant", "tout est fait", "tout est terminé", "tout a été fait",
		"toutes les tâches restantes", "toutes les étapes restantes", "il n y a pas de", "il n y a plus", "plus nécessaire",
	}
	// frenchPast marks narration: "ensuite j'ai corrigé", "ce qui était à faire".
	frenchPast = []string{
		"ai", "avons", "avez", "ont", "avais", "avait", "avaient", "étais", "était", "étaient", "fut", "furent", "été", "eu",
	}
	frenchFuture = []string{
		"vais", "vas", "va", "allons", "allez", "vont", "faudra", "faudrait", "faut",
		"devra", "devrai", "devrons", "devront", "devrait", "pourra", "pourrai", "pourrons",
		"sera", "serai", "serons", "seront", "fera", "ferai", "ferons", "feront", "aura", "aurai",
		"*erai", "*erons", "*eront", "*era", "*irai", "*irons", "*iront", "*ira", "plus tard",
	}
)
