package rules

import (
	"fmt"
	"slices"
	"strings"
)

// The recognizer's phrases: what callers say to this provider, generated
// from the matcher's own tables (the intents' cues, the number words, the
// meridiems and named times, the party words and the name leads), so that
// a cue or a slot word added to a table is one a speech recognizer biased
// with Phrases expects. Each generated sentence is said in a known state
// (a booking held, a slot asked for) and has known slots; the tests
// classify every one of them (phrases_test.go).

// phrase is one generated sentence and the booking slots it says (the
// booking intent only; at is "HH:MM").
type phrase struct {
	text  string
	party int
	at    string
	name  string
}

// phraseSet is the sentences of one intent said in one state.
type phraseSet struct {
	intent  intent
	state   state
	phrases []phrase
}

// intentRow says how the cues of one intent are spoken: each cue inside
// each frame ("%s" is the cue), whole sentences besides, and an example
// for a page that tells a caller what to say.
type intentRow struct {
	intent    intent
	cues      cues
	frames    []string
	sentences []string
	example   string
	// pending: said in reply to a booking held for confirmation.
	pending bool
}

// intentRows are the intents' rows, in the order the examples are shown.
// The booking intent's sentences come from bookingPhrases as well.
var intentRows = []intentRow{
	{intent: intentGreeting, cues: greetingCues, frames: []string{"%s", "oh %s", "%s how are you"}, example: "Hello!"},
	{intent: intentTime, cues: timeCues, frames: []string{"%s"}, example: "What time is it?", sentences: []string{
		"what time is it", "what time is it now", "what's the time please", "can you tell me the time",
		"could you tell me the time please", "do you know what time it is", "what is the current time",
		"excuse me what time is it", "tell me the time", "do you have the time"}},
	{intent: intentBooking, cues: bookingCues, frames: []string{"%s", "%s please"},
		example: "Book a table for two at eight tonight under Sam."},
	{intent: intentConfirm, cues: confirmCues, frames: []string{"%s", "%s thank you", "oh %s"}, pending: true,
		example: "Yes, please.", sentences: []string{"yes please book it", "yes that's right", "yeah go ahead", "sure that sounds good"}},
	{intent: intentDecline, cues: declineCues, frames: []string{"%s", "%s thanks", "oh %s"}, pending: true,
		example: "No, cancel it.", sentences: []string{"no thank you", "no cancel it", "don't book it", "no that's wrong", "not right now"}},
	{intent: intentGoodbye, cues: goodbyeCues, frames: []string{"%s", "ok %s", "thank you %s"}, example: "Goodbye.",
		sentences: []string{"that's all thank you goodbye", "thanks bye", "ok thank you bye bye"}},
	{intent: intentHelp, example: "What can you do?", sentences: []string{
		"what can you do", "can you help me", "help", "i have a question", "what do you do", "who are you",
		"what is this", "how does this work"}},
}

// spelled are the normalised words a recognizer writes with the
// apostrophe that normalize drops.
var spelled = map[string]string{
	"thats": "that's", "whats": "what's", "dont": "don't", "oclock": "o'clock", "its": "it's", "names": "name's",
}

// unheard are cue words that the recognizer's pronunciation dictionary
// (pocketsphinx's cmudict-en-us) lacks: it cannot write them, so no phrase
// holds them; the matcher still reads them in typed text.
var unheard = map[string]bool{"hiya": true}

// firstNames are common first names (English-speaking countries' most
// given, with others common among their callers), each in the
// recognizer's dictionary: the name slot's vocabulary (the matcher takes
// any name). Words a recognizer confuses with the name leads are left
// out ("hunter" for "under").
var firstNames = strings.Fields(`
liam noah oliver elijah james william benjamin lucas henry theodore jack levi alexander jackson mateo
daniel michael mason sebastian ethan logan owen samuel jacob asher aiden john joseph wyatt david leo luke
julian hudson matthew ezra gabriel carter isaac luca anthony dylan lincoln thomas elias josiah charles
caleb christopher ezekiel miles isaiah andrew joshua nathan nolan adrian cameron santiago eli aaron ryan
angel cooper easton kai christian landon colton roman axel brooks jonathan robert jameson ian everett
wesley jeremiah leonardo jordan jose bennett silas nicholas parker beau weston austin connor carson
dominic xavier emmett adam rowan micah river ryder kingston damian sawyer luka evan vincent myles
harrison august bryson amir giovanni chase diego milo jasper walker jason cole nathaniel george lorenzo
zion luis archer enzo jonah theo zachary calvin ashton rhett atlas jude carlos adonis arthur victor
tyler kevin brian steven edward ronald paul mark donald kenneth timothy jeffrey frank scott eric stephen
larry justin brandon gregory raymond patrick dennis jerry peter harold douglas carl roger keith jeremy
terry lawrence sean albert joe billy bruce ralph roy eugene russell philip bobby johnny howard fred
martin marcus simon sam max ben tom alex chris omar ali raj chen li wei ahmed hugo oscar felix ivan
olivia emma charlotte amelia sophia mia isabella ava evelyn luna harper sofia scarlett elizabeth eleanor
violet hazel chloe penelope layla nora lily ellie grace riley aurora ivy aria emily victoria hannah
natalie addison lucy stella leah savannah audrey claire bella anna samantha caroline maya sarah madison
ruby alice clara naomi julia ruth rose eva sadie piper lydia quinn taylor peyton valentina josephine
delilah nova everly willow emilia paisley isla jade madelyn autumn mila aubrey brooklyn genesis kennedy
aaliyah allison gabriella hailey katherine vivian jasmine kylie ariana alexa faith melanie sophie sara
margaret mary patricia jennifer linda barbara susan jessica karen nancy betty lisa sandra ashley
kimberly donna carol michelle amanda melissa deborah stephanie dorothy rebecca sharon laura cynthia amy
kathleen angela shirley brenda pamela nicole christine helen debra rachel carolyn janet maria catherine
heather diane julie joyce joan judith andrea megan cheryl martha teresa gloria janice kathryn frances
jean judy denise danielle marilyn beverly diana doris kayla alexis lori marie amber tina irene fatima
ana elena nina lena mira ingrid greta freya astrid kim lee park patel singh kumar khan hassan mohammed
yusef ibrahim arjun ravi rahul amit rohan kenji hiro akira hana sakura juan miguel jorge pedro pablo
javier rafael lucia carmen rosa isabel pierre louis marc hans karl klaus lars sven erik olaf dmitri
sergei boris igor olga natasha tanya kate jane zoe ella`)

// surnames are common family names, said after a first name ("under the
// name emily brown").
var surnames = strings.Fields(`
smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez lopez gonzalez
wilson anderson taylor moore jackson martin lee perez thompson white harris sanchez clark ramirez lewis
robinson walker young allen king wright scott torres nguyen hill flores green adams nelson baker hall
rivera campbell mitchell carter roberts gomez phillips evans turner diaz parker cruz edwards collins
reyes stewart morris morales murphy cook rogers gutierrez ortiz morgan cooper peterson bailey reed kelly
howard ramos cox ward richardson watson brooks chavez wood bennett gray mendoza ruiz hughes price
alvarez castillo sanders myers long ross foster jimenez chen wang singh khan murray`)

// bookingLeads open a booking request.
var bookingLeads = []string{
	"i want to book a table", "i would like to book a table", "i'd like to book a table", "can i book a table",
	"could i book a table", "book a table", "i'd like to reserve a table", "can i make a reservation",
	"i want to make a booking", "i need a table", "do you have a table", "reserve a table",
	"i would like a table", "we need a table", "can we have a table", "book us a table", "could you book a table",
	"please book a table", "can i get a reservation", "a reservation", "a table", "table", "i'd like a table",
	"i'd like to book", "we would like a table", "can i reserve a table", "i'd like to make a reservation",
	"please reserve a table", "i want a table", "could we book a table",
}

// bookingDays say the day of a booking (the matcher reads no day: the
// phrases put them where they change no slot).
var bookingDays = []string{
	"", "today", "tonight", "tomorrow", "tomorrow night", "this evening", "on monday", "on tuesday",
	"on wednesday", "on thursday", "on friday", "on saturday", "on sunday", "next friday",
}

// Phrases are the sentences callers say to the provider, in lower-case
// words as a speech recognizer writes them ("o'clock", "that's"): every
// intent's cues in frames, booking requests with party sizes 1 to 20,
// times (hours and minutes, "half past seven", "quarter to nine",
// "seven p m", "nineteen hundred", "noon"), common first names and days,
// and the bare answers of the booking dialog. They are generated from
// the matcher's tables, in a fixed order, without repeats: the training
// text of a recognizer's domain language model.
func Phrases() []string {
	seen := map[string]bool{}
	var out []string
	for _, set := range phraseSets() {
		for _, p := range set.phrases {
			if !seen[p.text] {
				seen[p.text] = true
				out = append(out, p.text)
			}
		}
	}
	return out
}

// Examples are a few things to say, one per intent, for a page that
// tells a caller what the provider understands (typed, with capitals and
// punctuation). The yes and no replies answer a booking read back.
func Examples() []string {
	out := make([]string, 0, len(intentRows))
	for _, r := range intentRows {
		out = append(out, r.example)
	}
	return out
}

// ReadBooking reads the booking slots the provider takes from text said
// as a first turn, with no dialog before it: the party size (0 for
// none), the time as "HH:MM" ("" for none) and the name ("" for none). A
// text that is not a booking request reads as none of them.
func ReadBooking(text string) (party int, at string, name string) {
	d := classify(normalize(text), state{})
	if d.intent != intentBooking {
		return 0, "", ""
	}
	b := d.booking
	if b.hasTime {
		at = b.at.String()
	}
	return b.party, at, b.name
}

// phraseSets are all the generated sentences, by intent and state.
func phraseSets() []phraseSet {
	var sets []phraseSet
	for _, r := range intentRows {
		set := phraseSet{intent: r.intent}
		if r.pending {
			set.state.pending = "held"
		}
		for _, c := range append(slices.Clone(r.cues.words), r.cues.phrases...) {
			for _, f := range r.frames {
				if s, ok := say(strings.Fields(fmt.Sprintf(f, c))); ok {
					set.phrases = append(set.phrases, phrase{text: s})
				}
			}
		}
		for _, s := range r.sentences {
			set.phrases = append(set.phrases, phrase{text: s})
		}
		sets = append(sets, set)
	}
	return append(sets, bookingPhrases()...)
}

// say writes normalised words as a recognizer spells them; false when one
// of them is unheard.
func say(words []string) (string, bool) {
	out := make([]string, len(words))
	for i, w := range words {
		if unheard[w] {
			return "", false
		}
		if s, ok := spelled[w]; ok {
			w = s
		}
		out[i] = w
	}
	return strings.Join(out, " "), true
}

// sayAll is say for words the tables hold and that are all heard.
func sayAll(words ...string) string {
	s, _ := say(words)
	return s
}

// saidTime is one way of saying a time, and the time.
type saidTime struct {
	text string
	at   clock
}

// bookingTimes are the times a booking is made for, each said in every
// way the matcher reads as that time: 11:00 to 22:55 in steps of five
// minutes (the evening hours bare, "seven thirty"; with each meridiem of
// its side, "seven thirty p m", "in the evening"; "half past", "quarter
// past", "quarter to", "twenty past"; 24-hour, "nineteen hundred",
// "nineteen thirty"), a few morning hours with a morning meridiem, and
// the named times.
func bookingTimes() []saidTime {
	var out []saidTime
	add := func(c clock, words ...string) { out = append(out, saidTime{sayAll(words...), c}) }
	sides := func(side int) [][]string {
		var ws [][]string
		for _, m := range meridiems {
			if m.side == side {
				ws = append(ws, m.words)
			}
		}
		return ws
	}
	for h := 11; h <= 22; h++ {
		for m := 0; m < 60; m += 5 {
			c := clock{h, m}
			h12 := h % 12
			if h12 == 0 {
				h12 = 12
			}
			base := strings.Fields(numberWords(h12))
			if m > 0 && m < 10 {
				base = append(base, "oh", numberWords(m))
			} else if m > 0 {
				base = append(base, strings.Fields(numberWords(m))...)
			}
			add(c, base...)
			if m == 0 {
				add(c, append(slices.Clone(base), "oclock")...)
			}
			side := 1
			if h < 12 {
				side = -1
			}
			for _, mw := range sides(side) {
				add(c, append(slices.Clone(base), mw...)...)
			}
			hour := strings.Fields(numberWords(h12))
			switch {
			case m == 30:
				add(c, append([]string{"half", "past"}, hour...)...)
			case m == 15:
				add(c, append([]string{"quarter", "past"}, hour...)...)
				add(c, append([]string{"a", "quarter", "past"}, hour...)...)
			case m == 45:
				add(c, append([]string{"quarter", "to"}, strings.Fields(numberWords(h12%12+1))...)...)
				add(c, append([]string{"a", "quarter", "to"}, strings.Fields(numberWords(h12%12+1))...)...)
			case m > 0 && m < 30:
				add(c, append(append(strings.Fields(numberWords(m)), "past"), hour...)...)
			}
			if h >= 13 {
				h24 := strings.Fields(numberWords(h))
				switch {
				case m == 0:
					add(c, append(h24, "hundred")...)
				case m < 10:
					add(c, append(h24, "oh", numberWords(m))...)
				default:
					add(c, append(h24, strings.Fields(numberWords(m))...)...)
				}
			}
		}
	}
	for h := 8; h <= 10; h++ {
		for _, m := range []int{0, 30} {
			base := strings.Fields(numberWords(h))
			if m > 0 {
				base = append(base, numberWords(m))
			}
			for _, mw := range sides(-1) {
				add(clock{h, m}, append(slices.Clone(base), mw...)...)
			}
		}
	}
	named := make([]string, 0, len(namedTimes))
	for w := range namedTimes {
		named = append(named, w)
	}
	slices.Sort(named)
	for _, w := range named {
		add(namedTimes[w], w)
	}
	return out
}

// saidParty is one way of saying a party size, and the size.
type saidParty struct {
	text string
	n    int
}

// bookingParties are the party sizes minParty to maxParty, each said
// "for four", "for four people" (each party word), "a party of four",
// "four of us", "there will be four of us", "just for four people" and
// "a group of four people".
func bookingParties() []saidParty {
	words := make([]string, 0, len(partyWords))
	for w := range partyWords {
		if w != "of" {
			words = append(words, w)
		}
	}
	slices.Sort(words)
	var out []saidParty
	for n := minParty; n <= maxParty; n++ {
		nw := numberWords(n)
		out = append(out, saidParty{"for " + nw, n})
		for _, w := range words {
			out = append(out, saidParty{"for " + nw + " " + w, n})
		}
		out = append(out, saidParty{"a party of " + nw, n}, saidParty{"for " + nw + " of us", n},
			saidParty{"there will be " + nw + " of us", n}, saidParty{"just for " + nw + " people", n},
			saidParty{"a group of " + nw + " people", n})
	}
	return out
}

// bookingNames are the names said after each of the matcher's name
// leads ("under sam", "my name is sam", "the name is sam", "in the name
// of sam"), and full names ("under the name emily brown").
func bookingNames() []phrase {
	var out []phrase
	for i, n := range firstNames {
		out = append(out, namedBy(nameLead[i%len(nameLead)], i/len(nameLead), n))
	}
	for i, lead := range nameLead { // every lead, also with few names
		out = append(out, namedBy(lead, i, firstNames[(i*7)%len(firstNames)]))
	}
	for i, sn := range surnames {
		out = append(out, namedBy(nameLead[i%len(nameLead)], i, firstNames[(i*11)%len(firstNames)], sn))
	}
	return out
}

// namedBy says a name (its words) after a lead; "name is" comes as "my
// name is" or "the name is" by the variant's parity.
func namedBy(lead []string, variant int, name ...string) phrase {
	words := slices.Clone(lead)
	if equal(lead, []string{"name", "is"}) {
		words = append([]string{[...]string{"my", "the"}[variant%2]}, words...)
	}
	parts := make([]string, len(name))
	for i, n := range name {
		parts[i] = title(n)
	}
	return phrase{text: sayAll(append(words, name...)...), name: strings.Join(parts, " ")}
}

// title is a one-word name as the matcher writes it ("Sam").
func title(n string) string { return strings.ToUpper(n[:1]) + n[1:] }

// bookingPhrases are the booking requests, first turns that name some
// of the slots, and the bare answers to each slot's question.
func bookingPhrases() []phraseSet {
	times, parties, names := bookingTimes(), bookingParties(), bookingNames()
	request := phraseSet{intent: intentBooking}
	// Every time, party and name in a request; the slots a request names
	// cycle through the seven non-empty choices.
	n := max(len(times), len(parties), len(names))
	for i := range n {
		t, p, nm := times[i%len(times)], parties[(i*7)%len(parties)], names[i%len(names)]
		lead := bookingLeads[i%len(bookingLeads)]
		day := bookingDays[(i/len(bookingLeads))%len(bookingDays)]
		parts := []string{lead}
		if day != "" {
			parts = append(parts, day)
		}
		var ph phrase
		mask := i%7 + 1
		withParty, withTime, withName := mask&1 != 0, mask&2 != 0, mask&4 != 0
		timeFirst := i%5 == 0
		if withTime && timeFirst {
			parts, ph.at = append(parts, "at "+t.text), t.at.String()
		}
		if withParty {
			parts, ph.party = append(parts, p.text), p.n
		}
		if withTime && !timeFirst {
			parts, ph.at = append(parts, "at "+t.text), t.at.String()
		}
		if withName {
			parts, ph.name = append(parts, nm.text), nm.name
		}
		if i%4 == 3 {
			parts = append(parts, "please")
		}
		ph.text = strings.Join(parts, " ")
		request.phrases = append(request.phrases, ph)
	}
	for _, l := range bookingLeads {
		request.phrases = append(request.phrases, phrase{text: l})
	}
	// The bare answers, each in the dialog that asked for its slot.
	party := phraseSet{intent: intentBooking, state: state{dialog: &booking{}}}
	for _, p := range parties {
		party.phrases = append(party.phrases, phrase{text: p.text, party: p.n})
	}
	for n := minParty; n <= maxParty; n++ {
		nw := numberWords(n)
		party.phrases = append(party.phrases, phrase{text: nw, party: n}, phrase{text: nw + " please", party: n},
			phrase{text: nw + " people", party: n})
	}
	at := phraseSet{intent: intentBooking, state: state{dialog: &booking{party: 2}}}
	for i, t := range times {
		text := t.text
		switch i % 3 {
		case 1:
			text = "at " + text
		case 2:
			text += " please"
		}
		at.phrases = append(at.phrases, phrase{text: text, party: 2, at: t.at.String()})
	}
	asked := booking{party: 2, at: clock{19, 0}, hasTime: true}
	name := phraseSet{intent: intentBooking, state: state{dialog: &asked}}
	for i, n := range firstNames {
		nm := title(n)
		text := [...]string{"%s", "it's %s", "%s please", "my name is %s"}[i%4]
		name.phrases = append(name.phrases, phrase{text: fmt.Sprintf(text, n), party: 2, at: "19:00", name: nm})
	}
	for _, nm := range names {
		name.phrases = append(name.phrases, phrase{text: nm.text, party: 2, at: "19:00", name: nm.name})
	}
	return []phraseSet{request, party, at, name}
}
