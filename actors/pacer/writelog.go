package pacer

import (
	"sync"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// The write log: when each frame the pacer handed out was written. The
// transport releases a frame once Conn.WriteFrame has taken it
// (messages.OutputAudio.Release), and a frame's release is the pacer's
// pool's function: it notes the frame's epoch, offset and time here
// before the frame goes back to the pool. A frame the pacer drops itself
// goes back to the pool without a note. The release runs on the
// transport's goroutine and the pacer reads the log on its own, hence
// the lock; the log lives in the props with the pool, since frames in
// the transport's hands outlive a restart of the pacer.
//
// So the pacer learns what the transport wrote without a message per
// frame, and the heard position at a cut (book.playedBy) never counts a
// frame that was still waiting in the transport's mailbox, nor one
// written late as if it had been written in time.

// written is one note: the frame at offset of epoch was written at at.
type written struct {
	epoch  messages.Epoch
	offset time.Duration
	at     time.Time
}

// writeLog holds the notes not read yet.
type writeLog struct {
	mu    sync.Mutex
	notes []written
	// spare is the slice handed back by the last drain, for reuse.
	spare []written
}

// note records that frame f was written now.
func (l *writeLog) note(f *messages.OutputAudio, now time.Time) {
	l.mu.Lock()
	l.notes = append(l.notes, written{epoch: f.Epoch, offset: f.Offset, at: now})
	l.mu.Unlock()
}

// drain hands the notes so far to fn, oldest first, and empties the log.
// fn runs without the lock.
func (l *writeLog) drain(fn func(written)) {
	l.mu.Lock()
	notes := l.notes
	l.notes = l.spare[:0]
	l.mu.Unlock()
	for _, n := range notes {
		fn(n)
	}
	l.mu.Lock()
	l.spare = notes[:0]
	l.mu.Unlock()
}
