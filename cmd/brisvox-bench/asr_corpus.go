package main

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/brisvox/brisvox/providers/llm/rules"
)

// The kinds of utterance of the corpus.
const (
	kindBooking  = "booking"  // a booking with its slots
	kindPartial  = "partial"  // one or two slots, as an answer to the agent's question
	kindRequest  = "request"  // a booking asked for with no slot
	kindTime     = "time"     // a question for the time
	kindYes      = "yes"      // a confirmation
	kindNo       = "no"       // a refusal
	kindGreeting = "greeting" // hello
	kindGoodbye  = "goodbye"  // the end of the call
	kindOOD      = "ood"      // out of the agent's domain: it must still be transcribed
)

var asrKinds = map[string]bool{
	kindBooking: true, kindPartial: true, kindRequest: true, kindTime: true, kindYes: true,
	kindNo: true, kindGreeting: true, kindGoodbye: true, kindOOD: true,
}

// asrUtterance is one line of the corpus.
type asrUtterance struct {
	ID    string
	Kind  string
	Slots bookingSlots
	Text  string
}

// Bounds of a corpus: the rules provider's party sizes and name length,
// and a text short enough for one utterance of the recognizer's queue.
const (
	asrMaxParty    = 20
	asrMaxNameRune = 40
	asrMaxText     = 300
	asrMaxLines    = 10000
)

var (
	asrIDPattern   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)
	asrTimePattern = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)
)

// asrHeader is the corpus's header line.
const asrHeader = "id\tkind\tparty\ttime\tname\ttext"

// parseCorpus reads the corpus: tab-separated lines id, kind, party, time
// (HH:MM), name, text after a header line; lines starting with # and
// empty lines are comments. An empty slot field is a slot the utterance
// does not name. Every id is unique. Errors wrap ErrCorpus with the line.
func parseCorpus(data []byte) ([]asrUtterance, error) {
	var out []asrUtterance
	seen := map[string]bool{}
	header := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 4096)
	line := 0
	for sc.Scan() {
		line++
		if line > asrMaxLines {
			return nil, fmt.Errorf("%w: more than %d lines", ErrCorpus, asrMaxLines)
		}
		s := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(s) == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if !header {
			if s != asrHeader {
				return nil, fmt.Errorf("%w: line %d: want the header %q", ErrCorpus, line, asrHeader)
			}
			header = true
			continue
		}
		u, err := parseCorpusLine(s)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrCorpus, line, err)
		}
		if seen[u.ID] {
			return nil, fmt.Errorf("%w: line %d: id %q again", ErrCorpus, line, u.ID)
		}
		seen[u.ID] = true
		out = append(out, u)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: line %d: %v", ErrCorpus, line+1, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no utterance", ErrCorpus)
	}
	return out, nil
}

// parseCorpusLine reads one utterance's fields.
func parseCorpusLine(s string) (asrUtterance, error) {
	f := strings.Split(s, "\t")
	if len(f) != 6 {
		return asrUtterance{}, fmt.Errorf("%d fields, want 6 (id, kind, party, time, name, text)", len(f))
	}
	u := asrUtterance{ID: f[0], Kind: f[1], Text: strings.TrimSpace(f[5])}
	if !asrIDPattern.MatchString(u.ID) {
		return asrUtterance{}, fmt.Errorf("id %q: want 1 to 32 letters, digits, - or _", u.ID)
	}
	if !asrKinds[u.Kind] {
		return asrUtterance{}, fmt.Errorf("kind %q unknown", u.Kind)
	}
	if f[2] != "" {
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 1 || n > asrMaxParty {
			return asrUtterance{}, fmt.Errorf("party %q: want 1..%d", f[2], asrMaxParty)
		}
		u.Slots.Party = n
	}
	if f[3] != "" {
		if !asrTimePattern.MatchString(f[3]) {
			return asrUtterance{}, fmt.Errorf("time %q: want HH:MM", f[3])
		}
		u.Slots.At = f[3]
	}
	if f[4] != "" {
		if len([]rune(f[4])) > asrMaxNameRune || len(rules.Words(f[4])) == 0 {
			return asrUtterance{}, fmt.Errorf("name %q: want 1 to %d characters with a letter", f[4], asrMaxNameRune)
		}
		u.Slots.Name = f[4]
	}
	switch {
	case u.Text == "":
		return asrUtterance{}, fmt.Errorf("no text")
	case len(u.Text) > asrMaxText:
		return asrUtterance{}, fmt.Errorf("text of %d bytes, over %d", len(u.Text), asrMaxText)
	case len(rules.Words(u.Text)) == 0:
		return asrUtterance{}, fmt.Errorf("text %q has no word", u.Text)
	case u.Text[0] == '-':
		// flite and espeak-ng take it for an option.
		return asrUtterance{}, fmt.Errorf("text starts with -")
	}
	return u, nil
}
