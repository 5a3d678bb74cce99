package tts

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/messages"
)

// Filler clips. A filler phrase whose clip the store holds is played from
// the clip instead of being sent to the provider:
//
//  1. If the epoch's segment has text, it is flushed and the clip waits
//     for the provider's Flushed, so the clip comes after the audio before
//     it; work of the epoch that comes meanwhile (the answer's next text,
//     the final flush) waits behind the clip, at most ClipWaitLimit.
//  2. The clip goes to the pacer as the epoch's audio, with its words at
//     their place in the epoch's audio, so a barge-in in the middle of the
//     clip keeps its heard words like provider speech.
//  3. The text after it opens the next segment (a new provider context),
//     whose words are placed after the clip.
//
// A clip of an epoch that ended (barge-in, a newer answer) is dropped
// before it plays. A phrase without a clip goes to the provider as text
// (clip_fallbacks when a store is configured).

// clipWaitDue fires when a clip waited ClipWaitLimit for its segment.
type clipWaitDue struct {
	epoch messages.Epoch
	gen   int
}

func (a *Actor) filler(ctx actor.Context, e *epochOut, text string) {
	clip, ok := a.clips.Lookup(text)
	if !ok {
		if a.clips != nil {
			a.stats.Inc("clip_fallbacks")
		}
		a.push(e, text)
		a.push(e, " ")
		return
	}
	e.clip = clip
	if !e.opened {
		a.playClip(ctx)
		return
	}
	a.stats.Inc("clip_waits")
	a.must(a.sess.Flush(e.id))
	e.waitGen++
	if a.timer != nil {
		a.timer.Stop()
	}
	self, root, due := ctx.Self(), ctx.ActorSystem().Root, &clipWaitDue{epoch: e.epoch, gen: e.waitGen}
	a.timer = time.AfterFunc(ClipWaitLimit, func() { root.Send(self, due) })
}

// playClip plays the current epoch's waiting clip, opens the next segment
// and goes on with the work that waited.
func (a *Actor) playClip(ctx actor.Context) {
	e := a.cur
	clip := e.clip
	e.clip = nil
	if a.timer != nil {
		a.timer.Stop()
	}
	a.stats.Inc("clips_played")
	start := e.audio
	a.play(ctx, clip.rate, clip.pcm)
	for _, w := range clip.words {
		ctx.Send(a.peers.Pacer, &messages.TTSWord{Epoch: e.epoch, Text: w.Text, Offset: start + w.Offset})
	}
	a.nextSegment(ctx, e)
	a.resume(ctx, e)
}

// nextSegment closes the current segment: later text goes to a new
// provider context whose audio follows what was played so far.
func (a *Actor) nextSegment(ctx actor.Context, e *epochOut) {
	a.tellUsage(ctx, e)
	e.chars, e.received = 0, 0
	delete(a.byID, e.id)
	e.seg++
	e.id = contextID(e.epoch, e.seg)
	a.byID[e.id] = e.epoch
	e.opened = false
	e.base = e.audio
}

// resume applies the work that waited behind a clip.
func (a *Actor) resume(ctx actor.Context, e *epochOut) {
	w := e.waiting
	e.waiting = nil
	for _, o := range w {
		a.do(ctx, o)
	}
}

// play sends audio of the current epoch to the pacer.
func (a *Actor) play(ctx actor.Context, rate int, pcm []int16) {
	e := a.cur
	if !e.firstOut {
		e.firstOut = true
		a.peers.Mark(ctx, e.epoch, messages.MarkTTSFirstAudio, time.Now())
	}
	a.stats.Inc("audio_chunks")
	e.audio += samplesDuration(len(pcm), rate)
	ctx.Send(a.peers.Pacer, &messages.TTSAudio{Epoch: e.epoch, Rate: rate, PCM: pcm})
}

// clipWaitDue gives up a clip whose segment never flushed: the answer
// goes on without it, in a new segment.
func (a *Actor) clipWaitDue(ctx actor.Context, m *clipWaitDue) {
	e := a.cur
	if e == nil || e.epoch != m.epoch || e.clip == nil || e.waitGen != m.gen {
		return
	}
	a.stats.Inc("clips_dropped")
	e.clip = nil
	a.nextSegment(ctx, e)
	a.resume(ctx, e)
}

// dropClip forgets the current epoch's waiting clip and the work behind
// it: the epoch ended.
func (a *Actor) dropClip() {
	if a.cur == nil || a.cur.clip == nil {
		return
	}
	a.stats.Inc("clips_dropped")
	a.cur.clip, a.cur.waiting = nil, nil
	if a.timer != nil {
		a.timer.Stop()
	}
}
