package agent

import (
	"strings"
	"testing"

	"github.com/brisvox/brisvox/messages"
)

func TestCutAssistantWords(t *testing.T) {
	book := tc("t1.0", "book", `{}`)
	tests := []struct {
		name     string
		msgs     []Message
		from     int
		words    int
		wantKept int
		want     []Message
	}{
		{
			// Catches keeping an empty assistant message, which Validate
			// and providers reject.
			name:  "nothing heard removes the message",
			msgs:  []Message{User("u"), Assistant("Hello there.", nil)},
			from:  1,
			words: 0,
			want:  []Message{User("u")},
		},
		{
			// Catches re-joining fields: punctuation and double spaces must
			// stay as spoken, trailing words and space go.
			name:     "exact prefix kept with punctuation",
			msgs:     []Message{User("u"), Assistant("  Sure,  I can  help. Which day?", nil)},
			from:     1,
			words:    3,
			wantKept: 3,
			want:     []Message{User("u"), Assistant("  Sure,  I can", nil)},
		},
		{
			name:     "spanning two assistant messages around a tool round",
			msgs:     []Message{User("u"), Assistant("Let me check.", []messages.ToolCall{book}), answer("t1.0", "ok"), Assistant("You are booked for nine.", nil)},
			from:     1,
			words:    6,
			wantKept: 6,
			want:     []Message{User("u"), Assistant("Let me check.", []messages.ToolCall{book}), answer("t1.0", "ok"), Assistant("You are booked", nil)},
		},
		{
			name:     "cut in the first message removes the unheard second",
			msgs:     []Message{User("u"), Assistant("Let me check.", []messages.ToolCall{book}), answer("t1.0", "ok"), Assistant("You are booked.", nil)},
			from:     1,
			words:    2,
			wantKept: 2,
			want:     []Message{User("u"), Assistant("Let me", []messages.ToolCall{book}), answer("t1.0", "ok")},
		},
		{
			// Catches dropping the calls with the text: the call ran.
			name:  "message with calls keeps them with no text",
			msgs:  []Message{User("u"), Assistant("Let me check.", []messages.ToolCall{book}), answer("t1.0", "ok"), Assistant("Booked.", nil)},
			from:  1,
			words: 0,
			want:  []Message{User("u"), Assistant("", []messages.ToolCall{book}), answer("t1.0", "ok")},
		},
		{
			name:     "words beyond the text keep everything",
			msgs:     []Message{User("u"), Assistant("One two. ", nil)},
			from:     1,
			words:    10,
			wantKept: 2,
			want:     []Message{User("u"), Assistant("One two. ", nil)},
		},
		{
			name:     "messages before from are untouched",
			msgs:     []Message{Assistant("Earlier answer.", nil), User("u"), Assistant("New answer here.", nil)},
			from:     2,
			words:    1,
			wantKept: 1,
			want:     []Message{Assistant("Earlier answer.", nil), User("u"), Assistant("New", nil)},
		},
		{
			name:     "non-ASCII spaces and letters",
			msgs:     []Message{Assistant("Très\u00a0bien, merci", nil)},
			from:     0,
			words:    2,
			wantKept: 2,
			want:     []Message{Assistant("Très\u00a0bien,", nil)},
		},
		{
			name:  "from beyond the end changes nothing",
			msgs:  []Message{Assistant("kept", nil)},
			from:  5,
			words: 0,
			want:  []Message{Assistant("kept", nil)},
		},
		{
			name:  "negative words count as none",
			msgs:  []Message{User("u"), Assistant("gone", nil)},
			from:  1,
			words: -3,
			want:  []Message{User("u")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ctxOf(tt.msgs...)
			if got := c.CutAssistantWords(tt.from, tt.words); got != tt.wantKept {
				t.Fatalf("CutAssistantWords() = %d, want %d", got, tt.wantKept)
			}
			if got, want := c.Fingerprint(), ctxOf(tt.want...).Fingerprint(); got != want {
				t.Fatalf("context =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestAssistantWords(t *testing.T) {
	msgs := []Message{Assistant("one two", nil), User("not counted here"), Assistant(" three ", []messages.ToolCall{tc("t1.0", "x", "{}")}), answer("t1.0", "four five")}
	tests := []struct {
		name string
		from int
		want int
	}{
		{name: "all", from: 0, want: 3},
		{name: "from the second assistant", from: 2, want: 1},
		{name: "past the end", from: 9, want: 0},
		{name: "negative from counts all", from: -1, want: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ctxOf(msgs...).AssistantWords(tt.from); got != tt.want {
				t.Fatalf("AssistantWords(%d) = %d, want %d", tt.from, got, tt.want)
			}
		})
	}
}

func TestPrefixWordsMatchesFields(t *testing.T) {
	inputs := []string{"", " ", "a", " a b  c ", "x\ty\nz", "\xffbad\xfe bytes", "日本 語"}
	for _, s := range inputs {
		t.Run(s, func(t *testing.T) {
			_, n := prefixWords(s, 1<<30)
			if want := len(strings.Fields(s)); n != want {
				t.Fatalf("prefixWords(%q) counts %d words, strings.Fields %d", s, n, want)
			}
		})
	}
}
