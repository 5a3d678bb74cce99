package agent

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// CutAssistantWords cuts the assistant text from index from on to the words
// the caller heard, so the model's memory matches what was played when a
// barge-in stops the speech. It walks the assistant messages at indices >=
// from in order and keeps their words (as strings.Fields splits them) until
// words words are kept in total. Each message keeps its original text up to
// the end of its last kept word (the string is cut, not re-joined, so
// punctuation and spacing stay as spoken). A message left with no text and
// no tool calls is removed, since an empty assistant message is invalid;
// later indices shift down. A message with tool calls keeps them even with
// no text: the calls were made whether or not their preamble was heard.
// words beyond the text keep everything. It returns the number of words
// kept.
func (c *Context) CutAssistantWords(from int, words int) (kept int) {
	from = max(from, 0)
	words = max(words, 0)
	if from >= len(c.msgs) {
		return 0
	}
	out := c.msgs[:from:from] // full slice expression: appends copy, never overwrite
	for _, m := range c.msgs[from:] {
		if m.Role != RoleAssistant {
			out = append(out, m)
			continue
		}
		text, n := prefixWords(m.Text, words-kept)
		kept += n
		if text == "" && len(m.ToolCalls) == 0 {
			continue
		}
		m.Text = text
		out = append(out, m)
	}
	c.msgs = out
	return kept
}

// AssistantWords counts the words (as strings.Fields splits them) of the
// assistant messages at indices >= from: what CutAssistantWords would keep
// if everything was heard.
func (c *Context) AssistantWords(from int) int {
	n := 0
	for _, m := range c.msgs[min(max(from, 0), len(c.msgs)):] {
		if m.Role == RoleAssistant {
			n += len(strings.Fields(m.Text))
		}
	}
	return n
}

// prefixWords returns s cut at the end of its n-th word, and the number of
// words in that prefix. When s has n words or fewer it is returned whole
// (trailing space included). Words are split as strings.Fields does
// (unicode.IsSpace); invalid UTF-8 bytes count as word characters, as
// there.
func prefixWords(s string, n int) (string, int) {
	if n <= 0 {
		return "", 0
	}
	count := 0
	inWord := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		space := unicode.IsSpace(r)
		if space && inWord {
			count++
			if count == n {
				return s[:i], count
			}
		}
		inWord = !space
		i += size
	}
	if inWord {
		count++
	}
	return s, count
}
