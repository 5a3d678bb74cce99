package turn

import "testing"

// TestTurnText: how the words and keys of a turn read to the model. The
// keys are spelled one by one after the words, which get a full stop
// unless they end a sentence already. Mutation caught (seen failing): the
// full stop added whatever the words end with ("Is it?. ...").
func TestTurnText(t *testing.T) {
	cases := []struct {
		name    string
		finals  []string
		interim string
		keys    string
		want    string
	}{
		{name: "keys alone", keys: "42#", want: "The caller pressed 4 2 #"},
		{name: "every key", keys: "0123456789*#ABCD", want: "The caller pressed 0 1 2 3 4 5 6 7 8 9 * # A B C D"},
		{name: "words alone", finals: []string{"Hello", "there"}, want: "Hello there"},
		{name: "words then keys", finals: []string{"My code is"}, keys: "12", want: "My code is. The caller pressed 1 2"},
		{name: "question then keys", finals: []string{"Is it this one?"}, keys: "3", want: "Is it this one? The caller pressed 3"},
		{name: "sentence then keys", finals: []string{"It is."}, keys: "3", want: "It is. The caller pressed 3"},
		{name: "interim then keys", interim: " uh ", keys: "9", want: "uh. The caller pressed 9"},
		{name: "words ending in a non-ASCII letter", finals: []string{"Café"}, keys: "1", want: "Café. The caller pressed 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &Actor{finals: tc.finals, lastInterim: tc.interim}
			a.keys.digits = []byte(tc.keys)
			if got := a.turnText(); got != tc.want {
				t.Fatalf("%q, want %q", got, tc.want)
			}
		})
	}
}

// TestKeysTextAllocs: spelling the keys is one allocation, whatever their
// number (the builder is sized up front).
func TestKeysTextAllocs(t *testing.T) {
	k := keys{digits: []byte("0123456789*#ABCD0123456789*#ABCD")}
	if n := testing.AllocsPerRun(100, func() { _ = k.text() }); n != 1 {
		t.Fatalf("%v allocations, want 1", n)
	}
}
