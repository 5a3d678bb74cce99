// Package recording writes a call's audio to disk as it happens: the
// caller on the left channel, the bot on the right as actually sent (a cut
// answer stops where it was cut), as a stereo PCM16 WAV file.
//
// The transport actor hands every frame to the call's tap (Call.Input and
// Call.Output, media/conn.Tap) on its own goroutines. The tap places the
// frame by its time since the call began (20 ms slots), copies its samples
// into a pooled buffer and offers it to the call's bounded queue; a full
// queue drops the frame and counts it, so a slow disk never delays the
// call's audio. One writer goroutine per call takes the queue, lines the
// two channels up slot by slot (silence where a channel had nothing: the
// bot not speaking, a dropped frame, a paused span), resamples the
// slower channel to the file's rate and streams the file through a buffer.
// Close finalises the RIFF header, renames <id>.wav.part to <id>.wav and
// returns the recording's account for the call record.
package recording
