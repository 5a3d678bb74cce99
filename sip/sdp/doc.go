// Package sdp is the SDP offer/answer (RFC 3264) of one SIP call: it
// reads the caller's offer and writes our answer, or writes our offer (an
// INVITE without SDP, an offerless re-INVITE) and reads their answer, and
// says what was settled for the call's audio (Negotiated): codec, payload
// types, the remote's RTP and RTCP addresses, packet times, direction.
// The signalling layer (sip/signal) calls it with the bodies of INVITE,
// re-INVITE, UPDATE, 2xx and ACK; the RTP layer (sip/rtp) runs on its
// result. It parses with pion/sdp and writes its own descriptions.
//
// # Reading a remote description
//
// A body longer than Config.MaxSize (16 KiB), with more m-lines than
// MaxMedia or more formats on one m-line than MaxFormats, is refused with
// ErrTooLarge before pion builds anything of size; one that is not an RFC
// 4566 description is ErrMalformed. Nothing of the body is quoted in an
// error. A missing line end after the last line is forgiven (many stacks
// leave it out). Only the audio stream we take is read in depth, so a
// strange video stream cannot fail an audio call.
//
// # Choosing the stream and the codec
//
// We take the first audio m-line with a port, of profile RTP/AVP or
// RTP/AVPF, that has a codec of ours; every other m-line is answered with
// port 0, so the answer has as many m-lines as the offer, in its order.
// Without any audio stream: ErrNoAudio; with only SRTP ones (RTP/SAVP,
// UDP/TLS/RTP/SAVPF): ErrUnsupportedProfile; without a codec of ours:
// ErrNoCommonCodec. Each is a 488; Session.Warning gives the Warning
// header that says what we accept, StatusCode the response code.
//
// The codec is the first of OUR preference (Config.Codecs; default Opus,
// G.722, PCMU, PCMA: wideband first, because the recogniser wants 16 kHz
// and an 8 kHz call has lost the upper band for good) that the offer
// has, not the offerer's first choice: RFC 3264 lets the answerer pick
// among the offered formats, and the agent's preference is ours to keep.
// In a re-offer the codec in use wins while it is still offered, so hold,
// resume and a move never switch the codec mid-call. Codecs are matched by
// rtpmap name (any case) and clock: PCMU/8000 (0), PCMA/8000 (8),
// G722/8000 (9; its audio is 16 kHz, its RTP clock 8000), opus/48000/2
// (dynamic); a static payload type without rtpmap has its RFC 3551
// meaning. telephone-event is taken only at the chosen codec's RTP clock
// (8000 for G.711 and G.722, 48000 for Opus), CN (RFC 3389) likewise,
// never with Opus. The answer uses the offer's payload type numbers.
//
// # Packet time
//
// We send Config.PtimeOut (20 ms) unless the remote's a=ptime asks for
// another, and never above its a=maxptime; our SDP says a=ptime with what
// we send and a=maxptime:60. A request outside 10 to 60 ms is clamped to
// the nearest size we can send (a=ptime:100 gets 60 ms, a=ptime:5 gets
// 10), and one between sizes gets the size below it (25 gets 20; Opus,
// one frame a packet, has 10, 20, 40 and 60): a=ptime is a preference
// (RFC 4566 §6), and a call at the nearest size beats a refusal.
// Negotiated.PtimeIn is the remote's a=ptime clamped to 10 to 60 ms (sipp
// sends 30 ms), a hint for the jitter buffer.
//
// # Addresses and RTCP
//
// c= may be at session or media level (media wins), IN IP4 or IN IP6, and
// must be a unicast IP literal of our address family: host names (we
// resolve none), multicast and scoped addresses are ErrUnsupportedAddress.
// RTCP goes to a=rtcp's port and address when given (RFC 3605), to the RTP
// port with a=rtcp-mux (accepted when offered, RFC 5761, and offered by
// us), else to the RTP port + 1. Our c= and o= carry Config.PublicAddr
// when set (behind NAT), else the address of our RTP socket (Local),
// which must then be a specified address: it is never guessed.
//
// # Direction and hold
//
// The direction attribute is read at media level, else session level,
// else sendrecv. We answer sendonly with recvonly, recvonly with sendonly,
// inactive with inactive. The old hold form, c=0.0.0.0 (or ::), means
// "send me nothing" whatever the attribute says. Negotiated says whether
// we may send (Send), whether media will come (Receive: without it no
// media timeout applies), and Hold. RemoteChanged is true only when the
// remote's usable RTP or RTCP address differs from the last one: only
// then does the RTP layer learn its strict source latch again; a hold
// address is no move.
//
// # Our o= line
//
// The session id is random (62 bits from WithRand's reader, crypto/rand by
// default) and the version starts at 1 and moves by one each time what we
// send differs from the last description we sent; an unchanged re-answer
// or re-offer keeps it (RFC 3264 §8).
//
// # Our offers
//
// Offer proposes every configured codec (Opus as 111), telephone-event at
// 8000 (101) and at 48000 (110) as the codecs need, rtcp-mux, sendrecv.
// A later offer keeps the m-lines of the last exchange, refused ones at
// port 0, and its payload types: the codec and telephone-event in use
// keep theirs, and no other format takes a number the exchange gave
// another meaning (RFC 3264 §8.3.2). AcceptAnswer checks the answer against it (the same m-lines,
// only formats we offered, at our payload types: RFC 3264 §6.1 says
// SHOULD, we insist, so one payload type serves both ways) and takes the
// answer's first codec, the one the answerer will send. CancelOffer drops
// an offer whose transaction failed; while an offer is pending a remote
// offer is ErrOfferPending (491).
//
// A Session is owned by its dialog and is not safe for concurrent use; it
// does no I/O and starts no goroutine.
package sdp
