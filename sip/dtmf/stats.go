package dtmf

import "sync/atomic"

// Stats are a Detector's counters since it was made.
type Stats struct {
	// Packets is every well-formed packet fed.
	Packets uint64
	// Presses is the key presses reported (by Packet and by Expire).
	Presses uint64
	// Repeats is the packets of an event already reported: the second and
	// third end packet, late refreshes.
	Repeats uint64
	// Late is the packets of an older event after a newer one began
	// (reordered), ignored.
	Late uint64
	// Unended is the presses reported because a newer event began before
	// any end packet of theirs came.
	Unended uint64
	// Expired is the presses reported by Expire, EndTimeout after their
	// last packet.
	Expired uint64
	// Segments is the long-duration continuations joined to their press.
	Segments uint64
	// NonKey is the events from 16 on (flash, tones), not reported.
	NonKey uint64
	// Packed is the extra event blocks in packed payloads, not used.
	Packed uint64
	// Malformed is the payloads refused with ErrMalformedPayload.
	Malformed uint64
}

// counters are Stats, readable from another goroutine.
type counters struct {
	packets, presses, repeats, late, unended, expired, segments, nonKey, packed, malformed atomic.Uint64
}

// Stats returns the counters. Safe from any goroutine.
func (d *Detector) Stats() Stats {
	c := &d.stats
	return Stats{
		Packets:   c.packets.Load(),
		Presses:   c.presses.Load(),
		Repeats:   c.repeats.Load(),
		Late:      c.late.Load(),
		Unended:   c.unended.Load(),
		Expired:   c.expired.Load(),
		Segments:  c.segments.Load(),
		NonKey:    c.nonKey.Load(),
		Packed:    c.packed.Load(),
		Malformed: c.malformed.Load(),
	}
}
