package endofturn

import (
	"strings"
	"unicode"
)

// Text estimates from a transcript alone whether the caller's turn is
// complete, for an agent without an audio end-of-turn model: the words a
// sentence cannot end on ("a table for", "at seven and", "I want to",
// "um") mean the caller paused mid-sentence. It gives TextIncomplete
// then, TextComplete otherwise (an empty text is TextIncomplete: nothing
// was heard to answer). Policy.Delay turns them into MinDelay for a
// complete turn and MaxDelay for one left hanging. It reads English words only, case and punctuation aside; the
// transcript of any other language reads as complete, as a plain VAD
// endpoint would take it.
func Text(transcript string) float32 {
	last := lastWord(transcript)
	if last == "" || danglingWords[last] {
		return TextIncomplete
	}
	return TextComplete
}

// The estimates Text gives.
const (
	TextComplete   float32 = 1
	TextIncomplete float32 = 0
)

// lastWord is the transcript's last word, lower case, without the
// punctuation around it ("" for none).
func lastWord(s string) string {
	f := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
	for i := len(f) - 1; i >= 0; i-- {
		if w := strings.Trim(f[i], "'"); w != "" {
			return strings.ToLower(w)
		}
	}
	return ""
}

// danglingWords are the English words an utterance does not end on when
// it is finished: articles and possessives, the prepositions a request
// leaves open ("a table for", "at", "under"), the infinitive's to,
// conjunctions, subject pronouns and their contractions, hesitations. A
// word that often ends a finished sentence too is not one: "you" ("thank
// you"), "do" ("what can you do"), "with", "from", "no", "some", "her",
// "want", "need", "it", "on", "in".
var danglingWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a an the my your our their its
		for at to of under into than
		and or but because if
		i we they he she
		i'm we're you're they're i'll we'll you'll they'll i'd we'd i've we've
		um uh er erm hmm
		wanna gonna
	`) {
		m[w] = true
	}
	return m
}()
