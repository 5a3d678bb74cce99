// Package pacer plays the bot's audio out in real time: it cuts the TTS
// audio of the current epoch into 20 ms frames, releases one frame per frame
// period to the transport (the first at once, with Config.StartLead more), and feeds the playout book
// (book.go, a pure type): which words of the epoch started playing and
// what the marks confirmed. On an interrupt it clears its queue and the
// transport's and settles what was heard, which the llm actor then asks
// for (HeardQuery); at an end it decides itself (played out, overlapped,
// restarted) it pushes Heard to the llm actor; it reports PlayoutDone to
// the turn actor at every end.
//
// With playback confirmations (Config.ConfirmEvery) the heard position at
// a cut is what the caller can have played since the newest echo, and
// only of what the transport wrote: each frame's release by the
// transport (it has written the frame) is noted in the write log
// (writelog.go), and from the confirmed position on a frame counts from
// when the one before it ended or when it came (its write plus the lag
// the newest echo showed between a write and its playout), whichever is
// later. A delivery stall after an echo (the transport starved, frames
// still in its mailbox) is thus not counted as heard, nor is the backlog
// written at the stall's end counted faster than real time; such cuts are
// counted "stalled_cuts". What the connection still queues after
// WriteFrame (a websocket's outbox, which a clear empties) is seen only
// through that lag: a queue that grew after the echo is beyond the log,
// and the lead margin is the slack for it.
package pacer
