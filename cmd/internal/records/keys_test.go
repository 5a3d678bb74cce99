package records

import (
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestKeyPressesWithheld: a caller's key presses (a PIN, say) are not in
// the record, whatever the redactor knows: the line keeps the words and
// how many keys there were. Mutation caught: withholdKeys skipped (the
// line stored as said, "The caller pressed 4 2 7 1 #": four digits no
// phone rule takes).
func TestKeyPressesWithheld(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"The caller pressed 4 2 7 1 #", "The caller pressed [keys]"},
		{"My PIN is. The caller pressed 1 2 3 4", "My PIN is. The caller pressed [keys]"},
		{"The caller pressed 1 # and then. The caller pressed * 9", "The caller pressed [keys] and then. The caller pressed [keys]"},
		{"Nothing pressed here", "Nothing pressed here"},
	} {
		got, _ := withholdKeys(c.in)
		if got != c.want {
			t.Errorf("withholdKeys(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	s, err := New(Config{Node: "n", Numbers: NumbersDrop, Log: zerolog.Nop()}, newMemStore(), &memJournal{}, &memJournal{})
	if err != nil {
		t.Fatal(err)
	}
	r := &Record{Transcript: []Line{{Speaker: SpeakerCaller, Text: "The caller pressed 4 2 7 1 #", Keys: 5, At: time.Now()}}}
	s.finish(r)
	if strings.ContainsAny(r.Transcript[0].Text, "0123456789") || r.Transcript[0].Keys != 5 || r.Redactions["keys"] != 1 {
		t.Fatalf("line %+v, redactions %v", r.Transcript[0], r.Redactions)
	}
}
