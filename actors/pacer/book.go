package pacer

import (
	"strconv"
	"strings"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// The playout book: what was heard of each answer. It is pure — the actor
// feeds it the words' offsets, the heard position and the mark echoes,
// with the time they came — and keeps:
//
//   - the record (it survives the actor's restarts): the newest interrupt
//     and the last settled epochs with their heard words, so that stale
//     output is refused and a HeardQuery is answered after a restart;
//   - the epoch being played: the start offsets of its words and, with
//     playback confirmations, the newest confirmed position, when its
//     echo came, and when each frame from there on was written (the
//     write log's notes, writelog.go).
//
// settle counts the words that started before a position; cutPos bounds
// the heard position of a cut (the lead margin, then what the caller can
// have played since the newest confirmation: playedBy); echo reads a
// mark's name. The mark names are the book's too: "pos-<epoch>-<ms>"
// every ConfirmEvery, "end-<epoch>" after an epoch's last frame.

// settled is what was heard of a finished epoch.
type settled struct {
	epoch messages.Epoch
	words int
}

// record is the part of the book that survives restarts. Only one
// incarnation of the actor runs at a time, so it needs no lock.
type record struct {
	minEpoch messages.Epoch
	// history keeps the last settled epochs for HeardQuery.
	history [8]settled
	hn      int
}

// book is the playout book of one incarnation of the pacer over the
// record of the call.
type book struct {
	rec          *record
	margin       time.Duration
	confirmEvery time.Duration

	epoch messages.Epoch // epoch being played (0: none)
	words []time.Duration
	// With confirmEvery: the newest confirmed position of the epoch and
	// when its echo came (confirmedAt zero: none yet).
	confirmed   time.Duration
	confirmedAt time.Time
	// outs are the times the epoch's frames were written, from the frame
	// at outFrom on (outs[head] is that frame; a zero time: not written).
	// An echo moves outFrom to its position; at most maxOuts are kept.
	outs    []time.Time
	head    int
	outFrom time.Duration
	// lag is how long after its write the caller had played the frame
	// before the newest confirmed position (the echo's time less the
	// frame's write and length; 0 when unknown): the way from the
	// transport to the caller's ear and the echo's way back, as last
	// seen. A frame written later plays no sooner than its write plus lag.
	lag time.Duration
}

// maxOuts bounds the write times kept after the newest confirmation
// (5 s of frames): an echo older than that is long overdue, and a cut
// then counts only the confirmed position (the older frames' times are
// gone: seen as not written).
const maxOuts = 250

func newBook(rec *record, margin, confirmEvery time.Duration) *book {
	return &book{rec: rec, margin: margin, confirmEvery: confirmEvery, words: make([]time.Duration, 0, 64)}
}

// begin starts the account of epoch e.
func (b *book) begin(e messages.Epoch) {
	b.epoch = e
	b.words = b.words[:0]
	b.confirmed, b.confirmedAt = 0, time.Time{}
	clear(b.outs)
	b.outs, b.head, b.outFrom, b.lag = b.outs[:0], 0, 0, 0
}

// word records the start offset of the epoch's next word.
func (b *book) word(off time.Duration) { b.words = append(b.words, off) }

// stale tells whether output of epoch e may no longer be played: it is
// older than the newest interrupt or the epoch being played, or it was
// settled.
func (b *book) stale(e messages.Epoch) bool {
	return e < b.rec.minEpoch || e < b.epoch || b.wasSettled(e)
}

// open tells whether an epoch is being played and not settled yet.
func (b *book) open() bool { return b.epoch != 0 && !b.wasSettled(b.epoch) }

// interrupt records an interrupt that starts epoch e; false when it is
// not newer than the last one.
func (b *book) interrupt(e messages.Epoch) bool {
	if e <= b.rec.minEpoch {
		return false
	}
	b.rec.minEpoch = e
	return true
}

// settle records the current epoch as heard up to pos and returns its
// heard words: those that started before pos.
func (b *book) settle(pos time.Duration) int {
	words := 0
	for _, off := range b.words {
		if off < pos {
			words++
		}
	}
	r := b.rec
	r.history[r.hn%len(r.history)] = settled{epoch: b.epoch, words: words}
	r.hn++
	return words
}

func (b *book) wasSettled(e messages.Epoch) bool {
	_, ok := b.heardOf(e)
	return ok
}

// heardOf answers a HeardQuery: the settled count of e, and whether e was
// settled (an epoch that never played was heard not at all).
func (b *book) heardOf(e messages.Epoch) (int, bool) {
	for _, s := range b.rec.history {
		if s.epoch == e && e != 0 {
			return s.words, true
		}
	}
	return 0, false
}

// cutPos is the heard position of a cut of the epoch heard up to heard
// at now: the lead margin off, then bounded by the newest playback
// confirmation when the transport gives them (what the caller can have
// played since: playedBy; none yet: nothing is confirmed heard). bounded
// says the confirmation moved the position; stalled, that the writes
// did (a frame written late or not yet: the confirmed position plus the
// time since its echo would have counted more).
func (b *book) cutPos(heard time.Duration, now time.Time) (pos time.Duration, bounded, stalled bool) {
	pos = max(heard-b.margin, 0)
	if b.confirmEvery == 0 {
		return pos, false, false
	}
	if b.confirmedAt.IsZero() {
		return 0, pos > 0, false // nothing is confirmed heard
	}
	if conf := b.playedBy(now); conf < pos {
		return conf, true, conf < b.confirmed+now.Sub(b.confirmedAt)
	}
	return pos, false, false
}

// playedBy is the furthest the caller can have played by now: the
// confirmed position, then each frame written after it in turn, a frame
// starting when the one before it ended or when it had come (its write
// plus the lag seen at the echo), whichever is later: the caller plays in
// real time and cannot play what has not come. A frame not written by
// now, or one that cannot have started, ends the count; the frame playing
// counts up to now. With every frame written in time this is the
// confirmed position plus the time since its echo came; a delivery stall
// after the echo is not counted as heard, nor is the backlog written at
// its end counted faster than real time.
func (b *book) playedBy(now time.Time) time.Duration {
	pos, free := b.confirmed, b.confirmedAt
	if b.outFrom != pos {
		return pos // the frames after it were let go (maxOuts)
	}
	for _, at := range b.outs[b.head:] {
		if at.IsZero() {
			break
		}
		start := free
		if come := at.Add(b.lag); come.After(start) {
			start = come
		}
		if !now.After(start) {
			break
		}
		if d := now.Sub(start); d < messages.FrameDuration {
			return pos + d
		}
		pos += messages.FrameDuration
		free = start.Add(messages.FrameDuration)
	}
	return pos
}

// out records that the epoch's frame at off was written at at. Frames
// before the newest confirmation are not needed; a frame never noted
// (between two noted ones) is kept as not written.
func (b *book) out(off time.Duration, at time.Time) {
	if b.confirmEvery == 0 || !b.open() || off < b.outFrom {
		return
	}
	i := b.head + int((off-b.outFrom)/messages.FrameDuration)
	if i < len(b.outs) {
		if b.outs[i].IsZero() {
			b.outs[i] = at
		}
		return
	}
	for len(b.outs) <= i {
		if len(b.outs)-b.head == maxOuts {
			b.outs[b.head] = time.Time{}
			b.head++
			b.outFrom += messages.FrameDuration
		}
		if b.head > 0 && len(b.outs) == cap(b.outs) {
			n := copy(b.outs, b.outs[b.head:])
			clear(b.outs[n:])
			i -= b.head
			b.outs, b.head = b.outs[:n], 0
		}
		b.outs = append(b.outs, time.Time{})
	}
	b.outs[i] = at
}

// lagAt is the lag an echo of pos come at at shows: at less the end of
// the frame before pos, had it played from its write (0 when its write
// is not known, or the echo came sooner).
func (b *book) lagAt(pos time.Duration, at time.Time) time.Duration {
	last := pos - messages.FrameDuration
	if last < b.outFrom {
		return 0
	}
	i := b.head + int((last-b.outFrom)/messages.FrameDuration)
	if i >= len(b.outs) || b.outs[i].IsZero() {
		return 0
	}
	return max(at.Sub(b.outs[i].Add(messages.FrameDuration)), 0)
}

// trimOuts forgets the write times of the frames before pos, the newest
// confirmed position.
func (b *book) trimOuts(pos time.Duration) {
	if pos < b.outFrom {
		return // already let go of (maxOuts): playedBy counts none
	}
	n := int((pos - b.outFrom) / messages.FrameDuration)
	if n >= len(b.outs)-b.head {
		clear(b.outs)
		b.outs, b.head = b.outs[:0], 0
	} else {
		clear(b.outs[b.head : b.head+n])
		b.head += n
	}
	b.outFrom = pos
}

// echoKind is what a mark echo meant to the book.
type echoKind int

const (
	echoIgnored   echoKind = iota // no confirmations, no epoch, or settled
	echoEnd                       // the end mark of the epoch
	echoConfirmed                 // a newer confirmed position
	echoOld                       // a position mark not newer than the last
	echoStale                     // a mark of another epoch, or no mark of ours
)

// echo takes a mark echo of the epoch being played, come at at: a
// position mark moves the confirmed position on; the end mark is told
// apart for the actor, which settles an epoch that played out. Echoes of
// other epochs confirm nothing now.
func (b *book) echo(name string, at time.Time) echoKind {
	if b.confirmEvery == 0 || !b.open() {
		return echoIgnored
	}
	if name == endName(b.epoch) {
		return echoEnd
	}
	e, pos, ok := parseConfirmName(name)
	if !ok || e != b.epoch {
		return echoStale
	}
	if pos > b.confirmed || b.confirmedAt.IsZero() {
		b.confirmed, b.confirmedAt = pos, at
		b.lag = b.lagAt(pos, at)
		b.trimOuts(pos)
		return echoConfirmed
	}
	return echoOld
}

// endName is the name of the mark after an epoch's last frame.
func endName(e messages.Epoch) string { return "end-" + strconv.FormatUint(uint64(e), 10) }

// confirmName is the name of the mark at pos of epoch e: "pos-<e>-<ms>".
func confirmName(e messages.Epoch, pos time.Duration) string {
	return "pos-" + strconv.FormatUint(uint64(e), 10) + "-" + strconv.FormatInt(pos.Milliseconds(), 10)
}

// parseConfirmName reads a confirmName; the name comes back from the
// client, so anything else is refused.
func parseConfirmName(name string) (messages.Epoch, time.Duration, bool) {
	rest, ok := strings.CutPrefix(name, "pos-")
	if !ok {
		return 0, 0, false
	}
	es, ms, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, 0, false
	}
	e, err := strconv.ParseUint(es, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	m, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || m < 0 || m > int64(time.Duration(1<<62)/time.Millisecond) {
		return 0, 0, false
	}
	return messages.Epoch(e), time.Duration(m) * time.Millisecond, true
}
