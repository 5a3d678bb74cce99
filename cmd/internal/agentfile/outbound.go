package agentfile

import "time"

// Bounds and default of outbound.first_words_wait.
const (
	defaultFirstWordsWait = 4 * time.Second
	minFirstWordsWait     = 500 * time.Millisecond
	maxFirstWordsWait     = 30 * time.Second
)

// Outbound is [outbound]: how the agent behaves on the calls it places
// (POST /operator/calls). Inbound calls do not read it.
type Outbound struct {
	// Greeting is the first line on an outbound call. Not written, it is
	// the top-level greeting (V and Pos the top level's, Set false); ""
	// with neither: no greeting.
	Greeting Value[string]
	// SpeakFirst greets as soon as the call is answered. Default false:
	// the bot waits for the callee's first words ("Hello?"), as a person
	// calling would, and an answering machine's message is not talked
	// over.
	SpeakFirst Value[bool]
	// FirstWordsWait is how long the bot waits for those first words
	// before it greets anyway (0.5s..30s, default 4s); not read with
	// SpeakFirst.
	FirstWordsWait Value[time.Duration]
	Pos            Pos
}

// outbound reads [outbound]; top is the top-level greeting.
func (w *walker) outbound(t *tbl, top Value[string]) Outbound {
	o := Outbound{Pos: t.pos}
	o.Greeting = t.str("greeting", "")
	if !o.Greeting.Set {
		o.Greeting = Value[string]{V: top.V, Pos: top.Pos}
	}
	o.SpeakFirst = t.boolean("speak_first", false)
	o.FirstWordsWait = t.duration("first_words_wait", defaultFirstWordsWait, minFirstWordsWait, maxFirstWordsWait)
	t.done("key", "", nil)
	f := w.format
	switch {
	case o.SpeakFirst.V && o.Greeting.V == "":
		w.at(o.SpeakFirst.Pos, "outbound.speak_first", "speak_first with no greeting: the bot would have nothing to say first",
			"add "+f.Setting("greeting", "Hello, this is ...")+" (here or at the top level), or remove speak_first")
	case o.SpeakFirst.V && o.FirstWordsWait.Set:
		w.at(o.FirstWordsWait.Pos, "outbound.first_words_wait", "first_words_wait is the wait for the callee's first words, and speak_first does not wait",
			"remove first_words_wait, or "+f.Setting("speak_first", false))
	}
	return o
}
