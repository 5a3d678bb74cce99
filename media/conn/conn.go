package conn

import (
	"context"

	"github.com/brisvox/brisvox/messages"
)

// Conn is the audio connection of one call, as the transport actor uses it.
type Conn interface {
	// InputRate and OutputRate are the sample rates of the caller's audio
	// and of the audio the call plays back.
	InputRate() int
	OutputRate() int
	// ReadFrame blocks until the next 20 ms of the caller's audio is in
	// f.PCM (len InputRate/50) with f.Start set, or until ctx ends. It
	// returns ErrClosed (wrapped) when the caller hung up.
	ReadFrame(ctx context.Context, f *messages.AudioFrame) error
	// WriteFrame queues bot audio. It must not block and must not keep f.
	WriteFrame(f *messages.OutputAudio) error
	// Clear drops queued bot audio of epochs before epoch.
	Clear(epoch messages.Epoch) error
	// Mark asks for an echo of name once what was written before it played.
	Mark(name string) error
	// OnMarkEcho registers the function that receives echoes; it must only
	// send a message.
	// nil unregisters.
	OnMarkEcho(func(name string))
	// Close hangs up. It is called once, when the call's tree has stopped.
	Close() error
}

// PlaybackConfirmer is a Conn whose mark echoes confirm playback: its
// client echoes a mark once the audio before it has played (a carrier's
// media stream), not once it was sent. The pacer then bounds what it
// counts as heard by the echoes (pacer.Config.ConfirmEvery).
type PlaybackConfirmer interface {
	ConfirmsPlayback() bool
}

// Describer is a Conn with its own account for the operator (a SIP call:
// the dialog, the codec, the RTP and RTCP figures). The transport actor
// adds it to its Describe: the state, the facts, and the counters under
// the prefix "conn_". It must not block.
type Describer interface {
	Describe() (state string, info map[string]string, counters map[string]uint64)
}

// DTMFReceiver is a Conn that hears the caller's key presses (RFC 4733
// telephone-events or SIP INFO on a SIP call, a carrier's dtmf events).
// The transport actor registers a receiver when it starts and hands each
// press to the turn actor, which decides what a digit does.
type DTMFReceiver interface {
	// OnDTMF registers the function that receives each key press, once per
	// press, with a valid digit (messages.ValidDTMFDigit); it must only
	// send a message. nil unregisters. Digits may be a PIN: an
	// implementation never logs them.
	OnDTMF(func(messages.DTMF))
}

// Transferrer is a Conn that can hand its caller to another party (a SIP
// call: REFER, or a bridged second leg). Transfer blocks until the
// transfer succeeded (the call then ends: the caller is elsewhere) or
// failed (the call goes on); ctx bounds the wait. target was checked
// against the agent's allowlist before it gets here; an implementation
// still refuses CR, LF and NUL. A failure wraps ErrTransferFailed and
// names its cause in fixed words (a status code, "no NOTIFY"), never the
// target.
type Transferrer interface {
	Transfer(ctx context.Context, target string) error
}

// DTMFSender is a Conn that can press keys on the call (RFC 4733 events
// or SIP INFO, as the trunk needs). SendDTMF blocks until every digit was
// sent (or ctx ends); digits holds only valid digits
// (messages.ValidDTMFDigit). An implementation never logs them.
type DTMFSender interface {
	SendDTMF(ctx context.Context, digits string) error
}

// Tap sees a call's audio where it crosses the transport: every frame
// read from the caller (Input) and every frame written to them (Output:
// the bot as actually sent, so a cut answer stops where it was cut). The
// transport actor calls it on its reader's and writer's goroutines, after
// the read and after the write. A Tap copies what it keeps (the frames
// go back to their pools) and never blocks: one that cannot keep up drops
// and counts (a call recorder), the call goes on.
type Tap interface {
	Input(f *messages.AudioFrame)
	Output(f *messages.OutputAudio)
}
