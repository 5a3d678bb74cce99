package rtp

import "sync/atomic"

// counter names one of a session's counters.
type counter int

const (
	cPacketsIn counter = iota
	cBytesIn
	cPacketsOut
	cBytesOut
	cCN
	cEvents
	cEventsUnhandled
	cRTCPIn
	cRTCPOut
	cRTCPBye
	cRTCPMalformed
	cDecodeErrors
	cEncodeErrors
	cSendErrors
	cReadErrors
	cOutputDropped
	cInputDropped
	cSendGaps
	cHoldFrames
	cTickLag
	cSilencePackets
	cPtimeDetected
	cEventsSent
	cDigitsSent
	cDTMFSends
	cRelayed
	cRelayDropped
	nCounters
)

// counters is a fixed set of atomic counters plus the drops by cause.
type counters struct {
	c     [nCounters]atomic.Uint64
	drops [nDrops]atomic.Uint64
}

func (c *counters) inc(k counter)           { c.c[k].Add(1) }
func (c *counters) add(k counter, n uint64) { c.c[k].Add(n) }
func (c *counters) get(k counter) uint64    { return c.c[k].Load() }
func (c *counters) drop(d dropCause)        { c.drops[d].Add(1) }
