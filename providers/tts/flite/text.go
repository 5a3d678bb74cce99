package flite

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// splitWords appends the complete words of buf to dst: a word is complete
// when whitespace follows it. It returns the incomplete word at the end of
// buf, "" when buf ends in whitespace.
func splitWords(dst []string, buf string) ([]string, string) {
	start := -1
	for i, r := range buf {
		switch {
		case !unicode.IsSpace(r):
			if start < 0 {
				start = i
			}
		case start >= 0:
			dst = append(dst, buf[start:i])
			start = -1
		}
	}
	if start < 0 {
		return dst, ""
	}
	return dst, buf[start:]
}

// asciiPunct maps the typographic punctuation an LLM writes to the ASCII
// that libflite's English front end reads.
func asciiPunct(r rune) (string, bool) {
	switch r {
	case '‘', '’', '‚', '‛', '′', '`':
		return "'", true
	case '“', '”', '„', '‟', '″', '«', '»':
		return `"`, true
	case '‐', '‑', '‒', '–', '—', '―', '−':
		return "-", true
	case '…':
		return "...", true
	}
	return "", false
}

// spokenForm returns the text of the word w that libflite is given: its
// compatibility decomposition with the combining marks left out (café ->
// cafe), typographic punctuation as ASCII, no other non-ASCII, control or
// space rune, at most MaxWordRunes runes. It is "" when nothing speakable
// is left, and never holds whitespace, so one word stays one libflite
// token.
func spokenForm(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 0x21 || c > 0x7e {
			ascii = false
			break
		}
	}
	if ascii {
		if len(w) > MaxWordRunes {
			return w[:MaxWordRunes]
		}
		return w
	}
	var b strings.Builder
	n := 0
	for _, r := range norm.NFKD.String(w) {
		if n >= MaxWordRunes {
			break
		}
		if s, ok := asciiPunct(r); ok {
			b.WriteString(s)
			n += len(s)
			continue
		}
		if r > 0x20 && r < 0x7f {
			b.WriteRune(r)
			n++
		}
	}
	s := b.String()
	if len(s) > MaxWordRunes {
		s = s[:MaxWordRunes]
	}
	return s
}

// boundary is how a word ends a stretch of speech.
type boundary int

const (
	midClause   boundary = iota // no punctuation that ends a phrase
	clauseEnd                   // , ; : or a dash
	sentenceEnd                 // . ! ? or an ellipsis
)

// wordBoundary tells how the word w ends, looking past closing quotes and
// brackets ("done.)" ends a sentence).
func wordBoundary(w string) boundary {
	w = strings.TrimRight(w, "\"')]}’”»")
	r, _ := utf8.DecodeLastRuneInString(w)
	switch r {
	case '.', '!', '?', '…':
		return sentenceEnd
	case ',', ';', ':', '-', '–', '—':
		return clauseEnd
	}
	return midClause
}

// takePiece picks how many of the pending words make the next synthesis
// call: up to the first sentence or clause end; else all of them once the
// context is flushed or they reach maxRunes; never more than maxRunes runes
// but at least one word. 0 means wait for more text. libflite gives each
// call its own intonation, so a piece is a phrase, never a lone word
// unless the text is.
//
// The first piece of a context (first) is what the caller waits for: it
// ends sooner, before a word that opens a phrase ("or", "at", "in",
// "under"; phraseOpeners) once firstPieceWords words come before it, so
// "I can tell you the time or book a table." starts after "I can tell
// you the time", whose synthesis takes half as long.
func takePiece(pending []string, flushed bool, maxRunes int, first bool) int {
	runes := 0
	for i, w := range pending {
		n := utf8.RuneCountInString(w) + 1
		if i > 0 && runes+n > maxRunes {
			return i
		}
		if first && i >= firstPieceWords && phraseOpeners[strings.ToLower(w)] {
			return i
		}
		runes += n
		if wordBoundary(w) != midClause {
			return i + 1
		}
	}
	if flushed || runes >= maxRunes {
		return len(pending)
	}
	return 0
}

// firstPieceWords is how many words a first piece cut before a phrase
// opener has at least: a shorter one would be a lone fragment.
const firstPieceWords = 4

// phraseOpeners are the words a first piece may be cut before: the
// conjunctions and prepositions that open a phrase of their own.
var phraseOpeners = map[string]bool{
	"or": true, "and": true, "but": true, "so": true, "because": true, "if": true, "when": true,
	"at": true, "in": true, "on": true, "for": true, "under": true, "with": true, "from": true, "to": true,
}

// utterance is what one synthesis call returns: the audio and, for each
// libflite token (one per word given, in order), the sample where its
// speech starts or -1 when it made no sound.
type utterance struct {
	pcm    []int16
	starts []int
	// leadEnd and tailStart bound the speech: the leading pause ends at
	// leadEnd, the trailing pause starts at tailStart.
	leadEnd, tailStart int
}

// timedWord is a word of a piece and the sample of the piece's audio where
// it starts.
type timedWord struct {
	text string
	at   int
}

// piece is the audio of one synthesis call, ready to be sent in chunks.
type piece struct {
	pcm   []int16
	words []timedWord
}

// How much of libflite's pauses a piece keeps. Every call starts and ends
// with a pause of about 150 to 250 ms; kept whole, a context of phrases
// would be choppy and its first word late.
const (
	keepLead         = 20 * time.Millisecond
	keepTailSentence = 250 * time.Millisecond
	keepTailClause   = 120 * time.Millisecond
	keepTailMid      = 40 * time.Millisecond
)

// samplesOf converts d to samples at rate.
func samplesOf(d time.Duration, rate int) int {
	return int(int64(d) * int64(rate) / int64(time.Second))
}

// buildPiece trims the pauses of u and names the words: words are the
// piece's words as pushed, tokens[k] the index in words of libflite token
// k. A word that made no sound (punctuation alone, a script libflite cannot
// read) joins the word before it, or the one after it at the start, so
// the words still join to the text. A piece with no sound at all is empty.
func buildPiece(words []string, tokens []int, u utterance, rate int) piece {
	at := make([]int, len(words))
	for i := range at {
		at[i] = -1
	}
	for k, wi := range tokens {
		if k < len(u.starts) && u.starts[k] >= 0 && u.starts[k] < len(u.pcm) {
			at[wi] = u.starts[k]
		}
	}
	var out []timedWord
	var lead []string // silent words before the first sounding one
	for i, w := range words {
		switch {
		case at[i] < 0 && len(out) == 0:
			lead = append(lead, w)
		case at[i] < 0:
			out[len(out)-1].text += " " + w
		case len(out) > 0 && at[i] <= out[len(out)-1].at:
			// Offsets strictly increase; a token that libflite started
			// no later than the one before it is heard as part of it.
			out[len(out)-1].text += " " + w
		default:
			text := w
			if len(lead) > 0 {
				text = strings.Join(append(lead, w), " ")
				lead = nil
			}
			out = append(out, timedWord{text: text, at: at[i]})
		}
	}
	if len(out) == 0 {
		return piece{}
	}
	first, last := out[0].at, out[len(out)-1].at
	from := min(max(0, u.leadEnd-samplesOf(keepLead, rate)), first)
	keep := keepTailMid
	switch wordBoundary(words[len(words)-1]) {
	case sentenceEnd:
		keep = keepTailSentence
	case clauseEnd:
		keep = keepTailClause
	}
	to := len(u.pcm)
	if u.tailStart > last {
		to = min(to, u.tailStart+samplesOf(keep, rate))
	}
	for i := range out {
		out[i].at -= from
	}
	return piece{pcm: u.pcm[from:to:to], words: out}
}
