// Package recording writes a call's audio to disk as it happens: the
// caller on the left channel, the bot on the right as actually sent (a cut
// answer stops where it was cut), as a stereo PCM16 WAV file or, in a
// build with cgo, as stereo Opus in Ogg (RFC 7845, 64 kbit/s).
//
// The transport actor hands every frame to the call's tap (Call.Input and
// Call.Output, media/conn.Tap) on its own goroutines. The tap places the
// frame by its time since the call began (20 ms slots), copies its samples
// into a pooled buffer and offers it to the call's bounded queue; a full
// queue drops the frame and counts it, so a slow disk never delays the
// call's audio. One writer goroutine per call takes the queue, lines the
// two channels up slot by slot (silence where a channel had nothing: the
// bot not speaking, a dropped frame, a paused span), resamples the
// channel of the lower rate to the file's (the higher) and streams the
// file through a buffer (Ogg: one page a second). Close finalises the
// file (the WAV header's sizes, the Ogg end-of-stream page), renames
// <id>.<format>.part to <id>.<format> and returns the recording's account
// for the call record.
package recording
