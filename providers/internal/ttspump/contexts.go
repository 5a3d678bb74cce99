package ttspump

import "slices"

// Contexts is the context table of a session that speaks its contexts
// one at a time, in the order they were opened (flite, OpenAI speech):
// the open ones, by id and in order (the head is being spoken), and the
// ids that take no more text (flushed or cancelled), of which the newest
// are remembered. Like the pump's queue it has no lock of its own: the
// session's lock guards it.
type Contexts[C any] struct {
	order       []*C
	byID        map[string]*C
	finished    map[string]struct{}
	finOrder    []string
	maxFinished int
}

// NewContexts makes an empty table that remembers up to maxFinished
// finished ids.
func NewContexts[C any](maxFinished int) *Contexts[C] {
	return &Contexts[C]{byID: map[string]*C{}, finished: map[string]struct{}{}, maxFinished: maxFinished}
}

// Get returns the open context id, nil if there is none.
func (t *Contexts[C]) Get(id string) *C { return t.byID[id] }

// Open adds c as the open context id, behind the others.
func (t *Contexts[C]) Open(id string, c *C) {
	t.byID[id] = c
	t.order = append(t.order, c)
}

// Len counts the open contexts.
func (t *Contexts[C]) Len() int { return len(t.order) }

// Head returns the first open context (the one being spoken), nil if
// there is none.
func (t *Contexts[C]) Head() *C {
	if len(t.order) == 0 {
		return nil
	}
	return t.order[0]
}

// Close removes the open context id wherever it is in the order and
// returns it (nil if it was not open).
func (t *Contexts[C]) Close(id string) *C {
	c := t.byID[id]
	if c == nil {
		return nil
	}
	delete(t.byID, id)
	t.order = slices.DeleteFunc(t.order, func(o *C) bool { return o == c })
	return c
}

// Finish remembers that id takes no more text, forgetting the oldest
// finished id beyond maxFinished.
func (t *Contexts[C]) Finish(id string) {
	if _, ok := t.finished[id]; ok {
		return
	}
	t.finished[id] = struct{}{}
	t.finOrder = append(t.finOrder, id)
	if len(t.finOrder) > t.maxFinished {
		delete(t.finished, t.finOrder[0])
		t.finOrder = slices.Delete(t.finOrder, 0, 1)
	}
}

// Finished tells whether id was finished (and is still remembered).
func (t *Contexts[C]) Finished(id string) bool {
	_, ok := t.finished[id]
	return ok
}
