package tts

import (
	"time"
	"unicode/utf8"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/messages"
)

// The call record's usage of the synthesizer: one EventUsage per provider
// context (an epoch's segment, e<epoch>[.n]) that was sent text, when the
// context ends on this side: its final Flushed, a cancel (barge-in, a
// newer answer), the segment closed for a filler clip, a restart, or the
// call's end with the context open. Characters counts the runes pushed
// (filler phrases without a clip and the word-ending spaces of mid-answer
// flushes included); Audio the provider's audio received for the context
// while it was current (clips are not the provider's; audio of a context
// after its cancel is dropped and not counted). Counted and sent only
// when the call is observed.

// push sends text to the segment's provider context.
func (a *Actor) push(e *epochOut, text string) {
	e.opened = true
	if a.peers.Events {
		e.chars += utf8.RuneCountInString(text)
	}
	a.must(a.sess.Push(e.id, text))
}

// tellUsage puts segment e's usage in the call record. Its callers tell a
// segment once: as it ends (ended set, or the segment closed for a clip).
func (a *Actor) tellUsage(s actor.SenderContext, e *epochOut) {
	if !e.opened || !a.peers.Events {
		return
	}
	a.peers.Event(s, &messages.CallEvent{Kind: messages.EventUsage, Epoch: e.epoch, At: time.Now(), Usage: &messages.ProviderUsage{
		Kind: messages.UsageTTS, Vendor: a.vendor, Model: a.model, Characters: e.chars, Audio: e.received}})
}
