package main

import (
	"strconv"
	"strings"

	"github.com/brisvox/brisvox/providers/llm/rules"
)

// This file is the ASR measurement's scoring: word errors over the words
// the rules provider reads (rules.Words: numbers as digits, so "for 4" and
// "for four" are the same words), and the booking slots read from a
// transcript against the corpus's.

// wordErrors is the Levenshtein distance between ref and hyp over words:
// the substitutions, deletions and insertions that turn one into the
// other.
func wordErrors(ref, hyp []string) int {
	prev := make([]int, len(hyp)+1)
	cur := make([]int, len(hyp)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ref); i++ {
		cur[0] = i
		for j := 1; j <= len(hyp); j++ {
			sub := prev[j-1]
			if ref[i-1] != hyp[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(hyp)]
}

// bookingSlots are the slots of one utterance: party 0, At "" and Name ""
// for none; At is "HH:MM".
type bookingSlots struct {
	Party int    `json:"party,omitempty"`
	At    string `json:"time,omitempty"`
	Name  string `json:"name,omitempty"`
}

// slotCount is how many of a slot the corpus names (Want), how many of
// those were read right (Right), and how many were read from utterances
// that name none of that slot (Spurious).
type slotCount struct {
	Want     int `json:"want"`
	Right    int `json:"right"`
	Spurious int `json:"spurious"`
}

// add scores one utterance's slot: want and got are "" (or 0) for none.
func (c *slotCount) add(want, got string) {
	switch {
	case want != "":
		c.Want++
		if strings.EqualFold(want, got) {
			c.Right++
		}
	case got != "":
		c.Spurious++
	}
}

func (c *slotCount) plus(o slotCount) {
	c.Want += o.Want
	c.Right += o.Right
	c.Spurious += o.Spurious
}

// accuracy is Right/Want, or -1 when the corpus names none.
func (c slotCount) accuracy() float64 {
	if c.Want == 0 {
		return -1
	}
	return float64(c.Right) / float64(c.Want)
}

// asrTally is the score of a set of decoded utterances.
type asrTally struct {
	Utterances int `json:"utterances"`
	// RefWords and WordErrors are over every utterance: word accuracy
	// is 1 - WordErrors/RefWords.
	RefWords   int       `json:"ref_words"`
	WordErrors int       `json:"word_errors"`
	Party      slotCount `json:"party"`
	Time       slotCount `json:"time"`
	Name       slotCount `json:"name"`
	// NameKnown is Name over the utterances whose name is in the domain
	// model's vocabulary (every word of it in rules.Phrases): callers
	// also say names outside it.
	NameKnown slotCount `json:"name_in_domain_vocabulary"`
	// OOD counts the out-of-domain utterances, OODHeard those of them
	// with a non-empty transcript.
	OOD      int `json:"ood"`
	OODHeard int `json:"ood_heard"`
	// Empty counts the utterances of any kind with an empty transcript.
	Empty int `json:"empty"`
}

// add scores one utterance: its reference, its transcript, the slots the
// corpus names and the slots read from the transcript; known tells
// whether its name is in the domain's vocabulary.
func (t *asrTally) add(u asrUtterance, transcript string, got bookingSlots, known bool) {
	t.Utterances++
	ref := rules.Words(u.Text)
	t.RefWords += len(ref)
	t.WordErrors += wordErrors(ref, rules.Words(transcript))
	t.Party.add(partyString(u.Slots.Party), partyString(got.Party))
	t.Time.add(u.Slots.At, got.At)
	t.Name.add(u.Slots.Name, got.Name)
	if known && u.Slots.Name != "" {
		t.NameKnown.add(u.Slots.Name, got.Name)
	}
	heard := strings.TrimSpace(transcript) != ""
	if !heard {
		t.Empty++
	}
	if u.Kind == kindOOD {
		t.OOD++
		if heard {
			t.OODHeard++
		}
	}
}

func (t *asrTally) plus(o asrTally) {
	t.Utterances += o.Utterances
	t.RefWords += o.RefWords
	t.WordErrors += o.WordErrors
	t.Party.plus(o.Party)
	t.Time.plus(o.Time)
	t.Name.plus(o.Name)
	t.NameKnown.plus(o.NameKnown)
	t.OOD += o.OOD
	t.OODHeard += o.OODHeard
	t.Empty += o.Empty
}

// wordAccuracy is 1 - WER; it is negative when the transcripts hold more
// errors than the references hold words.
func (t asrTally) wordAccuracy() float64 {
	if t.RefWords == 0 {
		return 0
	}
	return 1 - float64(t.WordErrors)/float64(t.RefWords)
}

// slots is the three slots together.
func (t asrTally) slots() slotCount {
	var s slotCount
	s.plus(t.Party)
	s.plus(t.Time)
	s.plus(t.Name)
	return s
}

// oodHeard is the share of out-of-domain utterances transcribed, or -1
// when there were none.
func (t asrTally) oodHeard() float64 {
	if t.OOD == 0 {
		return -1
	}
	return float64(t.OODHeard) / float64(t.OOD)
}

func partyString(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// vocabulary is the set of the words of sentences, as normWords gives
// them.
func vocabulary(sentences []string) map[string]bool {
	v := map[string]bool{}
	for _, s := range sentences {
		for _, w := range rules.Words(s) {
			v[w] = true
		}
	}
	return v
}

// inVocabulary tells whether every word of name is in v.
func inVocabulary(v map[string]bool, name string) bool {
	words := rules.Words(name)
	for _, w := range words {
		if !v[w] {
			return false
		}
	}
	return len(words) > 0
}
