// Package bridge relays the media of two established SIP calls to each
// other: the caller's rtp.Session and a second leg's, dialled for a
// bridged transfer. Each session's inbound packets go to the other
// session, which sends them on its own stream (its SSRC, sequence and
// timestamps; the marker kept; telephone-events passed at the other
// side's event payload type), from the reader goroutine that received
// them, with no allocation and no buffering: the added latency is the
// rewrite and one send. The latch, RTCP and the media timeout of both
// sessions keep working; the engine's audio on both waits while the
// bridge runs.
//
// Both legs must speak the same codec (packet times may differ: the
// receiver plays what it gets); transcoding through PCM is not
// implemented, New refuses the pair with ErrCodecMismatch.
//
// Stop returns both sessions to their normal mode; the bridge also ends
// by itself when either session ends (Done).
package bridge
