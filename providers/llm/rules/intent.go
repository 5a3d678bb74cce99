package rules

import (
	"strings"
	"unicode"
)

// intent is what a caller's turn asks for.
type intent int

// The intents, in no particular order (classify fixes the matching order).
const (
	intentHelp intent = iota
	intentGreeting
	intentTime
	intentBooking
	intentGoodbye
	intentConfirm
	intentDecline
	numIntents // the count of intents: a new one goes above
)

// String names the intent, for tests.
func (i intent) String() string {
	return [...]string{"help", "greeting", "time", "booking", "goodbye", "confirm", "decline"}[i]
}

// slot is a piece of a booking, in the order they are asked for.
type slot int

const (
	slotNone slot = iota
	slotParty
	slotTime
	slotName
)

// Bounds of a booking's slots (book_table's schema says the same).
const (
	minParty    = 1
	maxParty    = 20
	maxNameRune = 40
	maxNameWord = 3
)

// booking is the slots of a booking dialog so far.
type booking struct {
	party   int // 0: not known
	at      clock
	hasTime bool
	name    string
	// badParty: this turn named a party size outside [minParty, maxParty].
	badParty bool
	// reask: this turn filled nothing; the question is asked again.
	reask bool
}

// missing is the next slot to ask for, or slotNone when complete.
func (b booking) missing() slot {
	switch {
	case b.party == 0:
		return slotParty
	case !b.hasTime:
		return slotTime
	case b.name == "":
		return slotName
	}
	return slotNone
}

// state is what the conversation before a caller's turn says: a booking
// held for confirmation in the bot's last turn (the held call's id), and
// an open booking dialog.
type state struct {
	pending string
	dialog  *booking
}

// decision is the reading of one caller's turn.
type decision struct {
	intent  intent
	booking booking // intentBooking: the slots after the turn
}

// classify reads a caller's turn (normalised words) given the state before
// it, in the documented order: the reply to a held booking, goodbye,
// booking (a new one, or an answer in an open dialog), the time, a
// greeting, a question of an open dialog asked again, help.
func classify(words []string, st state) decision {
	if st.pending != "" {
		switch yesNo(words) {
		case 1:
			return decision{intent: intentConfirm}
		case -1:
			return decision{intent: intentDecline}
		}
	}
	if isGoodbye(words) {
		return decision{intent: intentGoodbye}
	}
	var b booking
	if st.dialog != nil {
		b = *st.dialog
		b.badParty, b.reask = false, false
	}
	if isBooking(words) {
		fill(&b, words, slotNone)
		return decision{intent: intentBooking, booking: b}
	}
	if st.dialog != nil && fill(&b, words, b.missing()) {
		return decision{intent: intentBooking, booking: b}
	}
	switch {
	case isTimeQuestion(words):
		return decision{intent: intentTime}
	case isGreeting(words):
		return decision{intent: intentGreeting}
	case st.dialog != nil:
		b.reask = true
		return decision{intent: intentBooking, booking: b}
	}
	return decision{intent: intentHelp}
}

// cues are the words and the runs of words that mark an intent: any one
// of them in a turn is the intent's mark. The recognizer's phrases are
// made of them too (phrases.go), so a cue added here is one the
// recognizer is biased to hear.
type cues struct {
	words   []string
	phrases []string // space-separated words, matched as a run
}

// in tells whether words hold one of the cues.
func (c cues) in(words []string) bool {
	if hasAny(words, c.words...) {
		return true
	}
	for _, p := range c.phrases {
		if hasPhrase(words, p) {
			return true
		}
	}
	return false
}

// The cues of the intents (never written after init).
var (
	declineCues = cues{words: []string{"no", "nope", "nah", "dont", "not", "cancel", "never", "wrong", "stop"}}
	confirmCues = cues{
		words: []string{"yes", "yeah", "yep", "yup", "yea", "sure", "ok", "okay", "correct", "right",
			"please", "confirm", "absolutely", "definitely", "perfect", "great", "fine"},
		phrases: []string{"go ahead", "do it", "book it", "sounds good", "of course"},
	}
	goodbyeCues = cues{words: []string{"bye", "goodbye"},
		phrases: []string{"good bye", "thats all", "that is all", "hang up", "see you"}}
	bookingCues  = cues{words: []string{"book", "booking", "reserve", "reservation", "table"}}
	timeCues     = cues{phrases: []string{"what time", "the time", "time is it", "whats the time", "current time", "time now"}}
	greetingCues = cues{words: []string{"hello", "hi", "hey", "hiya", "howdy"},
		phrases: []string{"good morning", "good afternoon", "good evening"}}
)

// yesNo reads a reply to a question: 1 yes, -1 no, 0 neither. A decline
// word wins ("no thanks", "not yet", "yes no wait").
func yesNo(words []string) int {
	if declineCues.in(words) {
		return -1
	}
	if confirmCues.in(words) {
		return 1
	}
	return 0
}

func isGoodbye(words []string) bool { return goodbyeCues.in(words) }

func isBooking(words []string) bool { return bookingCues.in(words) }

func isTimeQuestion(words []string) bool { return timeCues.in(words) }

func isGreeting(words []string) bool { return greetingCues.in(words) }

// fill sets the slots the words name (a party after "for", a time after
// "at" or with am/pm, a name after "under" or "my name is"), then, when the
// dialog asked for one, reads a bare answer to it ("four", "seven
// thirty", "sam"). It tells whether a slot was set or a bad party size
// was named.
func fill(b *booking, words []string, asked slot) bool {
	got := false
	if n, ok := partyOf(words, asked == slotParty); ok {
		if n < minParty || n > maxParty {
			b.badParty = true
		} else {
			b.party = n
		}
		got = true
	}
	if c, ok := timeOf(words, asked == slotTime); ok {
		b.at, b.hasTime, got = c, true, true
	}
	if name, ok := nameOf(words, asked == slotName && !got); ok {
		b.name, got = name, true
	}
	return got
}

// partyWords follow a party size.
var partyWords = map[string]bool{"people": true, "persons": true, "person": true, "guests": true, "adults": true, "of": true, "pax": true}

// partyOf reads a party size: "for four" (not "for seven pm"), "four
// people", "party of four", or, when bare, the first number that is not a
// time. A recognizer may write "for for" and "for to" for "for four" and
// "for two".
func partyOf(words []string, bare bool) (int, bool) {
	for i, w := range words {
		switch {
		case w == "for" && i+1 < len(words):
			switch words[i+1] {
			case "for":
				return 4, true
			case "to", "too":
				return 2, true
			}
			if v, n := number(words, i+1); n > 0 {
				if _, _, isTime := timeAt(words, i+1, false); !isTime {
					return v, true
				}
			}
		case w == "party" && i+2 < len(words) && words[i+1] == "of":
			if v, n := number(words, i+2); n > 0 {
				return v, true
			}
		}
		if v, n := number(words, i); n > 0 && i+n < len(words) && partyWords[words[i+n]] {
			if words[i+n] != "of" || (i+n+1 < len(words) && words[i+n+1] == "us") {
				return v, true
			}
		}
	}
	if bare {
		for i := range words {
			if i > 0 && words[i-1] == "at" {
				continue
			}
			if v, n := number(words, i); n > 0 {
				if _, _, isTime := timeAt(words, i, false); !isTime {
					return v, true
				}
			}
		}
	}
	return 0, false
}

// timeOf reads a time: after "at", or anywhere with o'clock or am/pm, or
// "half past seven"; when bare, also a plain hour ("seven thirty").
func timeOf(words []string, bare bool) (clock, bool) {
	for i, w := range words {
		if w == "at" {
			if c, _, ok := timeAt(words, i+1, true); ok {
				return c, true
			}
		}
	}
	for i := range words {
		if i > 0 && (words[i-1] == "for" || words[i-1] == "of") {
			// "for four", "party of four": a count, unless marked
			// as a time ("for seven pm"), which timeAt demands below.
			if c, _, ok := timeAt(words, i, false); ok {
				return c, true
			}
			continue
		}
		if _, n := number(words, i); n > 0 && i+n < len(words) && partyWords[words[i+n]] {
			continue // "four people" is not four o'clock
		}
		if c, _, ok := timeAt(words, i, bare); ok {
			return c, true
		}
	}
	return clock{}, false
}

// nameLead introduces a name.
var nameLead = [][]string{{"under", "the", "name", "of"}, {"under", "the", "name"}, {"in", "the", "name", "of"},
	{"under"}, {"name", "is"}, {"names"}, {"name", "of"}, {"this", "is"}, {"called"}}

// notName are words that end a name or cannot be one.
var notName = map[string]bool{
	"please": true, "thanks": true, "thank": true, "you": true, "at": true, "for": true, "and": true, "a": true,
	"an": true, "the": true, "table": true, "book": true, "is": true, "it": true, "its": true, "time": true,
	"yes": true, "yeah": true, "no": true, "ok": true, "okay": true, "hello": true, "hi": true, "hey": true,
	"bye": true, "goodbye": true, "what": true, "people": true, "name": true, "my": true, "thats": true,
	"sure": true, "um": true, "uh": true, "er": true, "tonight": true, "today": true, "tomorrow": true,
	"oclock": true, "pm": true, "am": true, "of": true, "to": true, "me": true, "i": true, "in": true,
	"right": true, "sorry": true, "so": true, "well": true, "just": true, "with": true, "on": true,
}

// nameFillers may come before a bare name ("it's sam", "my name is sam").
var nameFillers = map[string]bool{
	"its": true, "it": true, "is": true, "my": true, "name": true, "names": true, "the": true, "under": true,
	"um": true, "uh": true, "er": true, "well": true, "yes": true, "yeah": true, "ok": true, "okay": true,
	"sure": true, "so": true, "call": true, "me": true, "this": true, "thats": true, "of": true, "please": true,
}

// nameOf reads a name after a lead ("under sam", "my name is sam"), or,
// when bare, the message itself without its fillers ("it's sam
// please"). A name is one to three words of letters, title-cased, at most
// 40 characters.
func nameOf(words []string, bare bool) (string, bool) {
	for i := range words {
		for _, lead := range nameLead {
			if i+len(lead) <= len(words) && equal(words[i:i+len(lead)], lead) {
				if name, ok := nameAt(words, i+len(lead)); ok {
					return name, true
				}
			}
		}
	}
	if !bare {
		return "", false
	}
	i := 0
	for i < len(words) && nameFillers[words[i]] {
		i++
	}
	return nameAt(words, i)
}

// nameAt collects the name's words from words[i].
func nameAt(words []string, i int) (string, bool) {
	var parts []string
	for ; i < len(words) && len(parts) < maxNameWord; i++ {
		w := words[i]
		if notName[w] || !allLetters(w) {
			break
		}
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		parts = append(parts, string(r))
	}
	if len(parts) == 0 {
		return "", false
	}
	name := strings.Join(parts, " ")
	if r := []rune(name); len(r) > maxNameRune {
		name = strings.TrimSpace(string(r[:maxNameRune]))
	}
	return name, true
}

func allLetters(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return w != ""
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
