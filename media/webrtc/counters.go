package webrtc

import "sync/atomic"

// counter names one of the server's counters.
type counter int

// The server's counters. Bad offers are counted by reason; every call that
// ends is counted once by its end reason.
const (
	cOffers counter = iota
	cCalls
	cRefused
	cRefusedFull
	cRefusedDraining
	cRefusedResource
	cRefusedRateLimited
	cRefusedOverloaded
	cOriginRefused
	cOfferAbandoned
	cBadOfferTooLarge
	cBadOfferContentType
	cBadOfferJSON
	cBadOfferSDP
	cBadOfferNoAudio
	cBadOfferNoOpus
	cBadOfferRefusedByPeer
	cWSOpened
	cWSUnknownCall
	cWSSecond
	cWSBadMessages
	cWSBinary
	cWSClosedForAbuse
	cWSCandidates
	cWSInvalidUTF8
	cEndConnectTimeout
	cEndICEFailed
	cEndDTLSFailed
	cEndClientGone
	cEndPeerClosed
	cEndNoMedia
	cEndStalled
	cEndProtocol
	cEndHangup
	cEventsDropped
	cOutputDropped
	cInputDropped
	cRTCPPackets
	cRTPPackets
	cRTPErrors
	cRTPSent
	cSendGaps
	cTickLag
	cSilenceCached
	cInputDTX
	cPionLinesDropped
	nCounters
)

var counterNames = [nCounters]string{
	cOffers:                "offers",
	cCalls:                 "calls",
	cRefused:               "offers_refused",
	cRefusedFull:           "offers_refused_full",
	cRefusedDraining:       "offers_refused_draining",
	cRefusedResource:       "offers_refused_resource",
	cRefusedRateLimited:    "offers_refused_rate_limited",
	cRefusedOverloaded:     "offers_refused_overloaded",
	cOriginRefused:         "origin_refused",
	cOfferAbandoned:        "offers_abandoned",
	cBadOfferTooLarge:      "bad_offer_too_large",
	cBadOfferContentType:   "bad_offer_content_type",
	cBadOfferJSON:          "bad_offer_json",
	cBadOfferSDP:           "bad_offer_sdp",
	cBadOfferNoAudio:       "bad_offer_no_audio",
	cBadOfferNoOpus:        "bad_offer_no_opus",
	cBadOfferRefusedByPeer: "bad_offer_refused_by_peer",
	cWSOpened:              "ws_opened",
	cWSUnknownCall:         "ws_unknown_call",
	cWSSecond:              "ws_second_refused",
	cWSBadMessages:         "ws_bad_messages",
	cWSBinary:              "ws_binary_messages",
	cWSClosedForAbuse:      "ws_closed_for_bad_messages",
	cWSCandidates:          "ws_candidates",
	cWSInvalidUTF8:         "ws_invalid_utf8",
	cEndConnectTimeout:     "end_connect_timeout",
	cEndICEFailed:          "end_ice_failed",
	cEndDTLSFailed:         "end_dtls_failed",
	cEndClientGone:         "end_client_vanished",
	cEndPeerClosed:         "end_peer_closed",
	cEndNoMedia:            "end_no_media",
	cEndStalled:            "end_websocket_not_read",
	cEndProtocol:           "end_protocol_error",
	cEndHangup:             "end_hangup",
	cEventsDropped:         "events_dropped",
	cOutputDropped:         "output_frames_dropped",
	cInputDropped:          "input_frames_dropped",
	cRTCPPackets:           "rtcp_packets",
	cRTPPackets:            "rtp_packets",
	cRTPErrors:             "rtp_errors",
	cRTPSent:               "rtp_sent",
	cSendGaps:              "send_underruns",
	cTickLag:               "media_tick_lag_skips",
	cSilenceCached:         "silence_cached_packets",
	cInputDTX:              "input_dtx_frames",
	cPionLinesDropped:      "pion_lines_dropped",
}

// counters is a fixed set of atomic counters.
type counters [nCounters]atomic.Uint64

func (c *counters) inc(k counter) { c[k].Add(1) }
func (c *counters) snapshot() map[string]uint64 {
	m := make(map[string]uint64, nCounters)
	for i := range c {
		m[counterNames[i]] = c[i].Load()
	}
	return m
}
