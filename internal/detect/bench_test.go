package detect

import (
	"strings"
	"testing"
	"time"
)

// bigReply is a reply of about 4 MiB (the most an agent reply keeps) of
// prose in both languages, lists and code blocks, with one phrase at the
// very end: Check has to read all of it.
func bigReply() string {
	chunk := "I updated the parser so that it handles quoted values; the tests in `parse_test.go` cover the new cases.\n" +
		"J'ai d'abord lu le code, ensuite j'ai corrigé le bug dans la fonction de découpage, puis ajouté des tests.\n" +
		"- Renamed `nextSteps` to `plan` in the scheduler, which then calls the next stage.\n" +
		"```go\n// TODO: this is code, not prose\nfunc plan(next []Step) error { return nil }\n```\n" +
		"> Il reste des tests à écrire (a quotation of the task)\n" +
		"Le cache reste valide après un redémarrage et il n'y a aucune régression connue.\n\n"
	var b strings.Builder
	for b.Len() < 4<<20-100 {
		b.WriteString(chunk)
	}
	b.WriteString("Next steps: profile it.\nDONE\n")
	return b.String()
}

func BenchmarkPrematureCheck4MiB(b *testing.B) {
	reply := bigReply()
	p := DefaultPremature()
	if f, ok := p.Check(reply); !ok || f.Phrase != "next steps" {
		b.Fatalf("Check = %+v, %v; want the phrase at the end", f, ok)
	}
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		p.Check(reply)
	}
}

// TestPrematureOneHugeSentence: a reply of one 4 MiB sentence full of
// half-matches ("I will" without "later", phrases all negated) is read in
// time in proportion to its length.
func TestPrematureOneHugeSentence(t *testing.T) {
	reply := strings.Repeat("I will do it and there are no remaining tasks nor next steps ", 4<<20/62)
	done := make(chan bool)
	go func() {
		_, ok := DefaultPremature().Check(reply)
		done <- ok
	}()
	select {
	case ok := <-done:
		if ok {
			t.Error("a negated phrase was found")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Check of one 4 MiB sentence did not end")
	}
}
