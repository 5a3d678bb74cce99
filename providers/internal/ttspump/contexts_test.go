package ttspump

import (
	"slices"
	"testing"
)

type tctx struct{ id string }

// ids lists the open contexts in their order.
func ids(t *Contexts[tctx]) []string {
	var got []string
	for _, c := range t.order {
		got = append(got, c.id)
	}
	return got
}

// Mutations caught: Close leaving the context in the order (its turn
// would still come) or in the index (a Push would reach it); Head not the
// oldest open context; a finished id remembered twice (the bound would
// then forget a newer one first); the oldest finished id not forgotten
// past the bound (the memory grows with every context of a long call).
func TestContexts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		act      func(t *testing.T, tab *Contexts[tctx])
		open     []string
		head     string
		finished []string // remembered
		gone     []string // forgotten or never finished
	}{
		{
			name: "opened in order",
			act: func(t *testing.T, tab *Contexts[tctx]) {
				for _, id := range []string{"a", "b", "c"} {
					tab.Open(id, &tctx{id})
				}
			},
			open: []string{"a", "b", "c"}, head: "a",
		},
		{
			name: "closed in the middle",
			act: func(t *testing.T, tab *Contexts[tctx]) {
				for _, id := range []string{"a", "b", "c"} {
					tab.Open(id, &tctx{id})
				}
				if c := tab.Close("b"); c == nil || c.id != "b" {
					t.Errorf("Close(b) = %v", c)
				}
				if tab.Close("b") != nil || tab.Close("zz") != nil {
					t.Error("Close of a context not open returned one")
				}
			},
			open: []string{"a", "c"}, head: "a",
		},
		{
			name: "the head closed",
			act: func(t *testing.T, tab *Contexts[tctx]) {
				tab.Open("a", &tctx{"a"})
				tab.Open("b", &tctx{"b"})
				tab.Close("a")
			},
			open: []string{"b"}, head: "b",
		},
		{
			name: "finished ids bounded",
			act: func(t *testing.T, tab *Contexts[tctx]) {
				for _, id := range []string{"a", "b", "b", "c", "d"} {
					tab.Finish(id)
				}
			},
			finished: []string{"b", "c", "d"}, gone: []string{"a", "e"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := NewContexts[tctx](3)
			tc.act(t, tab)
			if got := ids(tab); !slices.Equal(got, tc.open) || tab.Len() != len(tc.open) {
				t.Errorf("open %q (Len %d), want %q", got, tab.Len(), tc.open)
			}
			for _, id := range tc.open {
				if c := tab.Get(id); c == nil || c.id != id {
					t.Errorf("Get(%q) = %v", id, c)
				}
			}
			if len(tab.byID) != len(tc.open) {
				t.Errorf("%d indexed, %d open", len(tab.byID), len(tc.open))
			}
			if h := tab.Head(); (h == nil) != (tc.head == "") || (h != nil && h.id != tc.head) {
				t.Errorf("Head %v, want %q", h, tc.head)
			}
			for _, id := range tc.finished {
				if !tab.Finished(id) {
					t.Errorf("%q not remembered as finished", id)
				}
			}
			for _, id := range tc.gone {
				if tab.Finished(id) {
					t.Errorf("%q remembered as finished", id)
				}
			}
		})
	}
}
