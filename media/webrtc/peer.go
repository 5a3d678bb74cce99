package webrtc

import (
	"slices"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/interceptor/pkg/report"
	pion "github.com/pion/webrtc/v4"
)

// opusPT is the payload type the server registers Opus under; an answer
// takes the offer's own payload type for it.
const opusPT = 111

// opusCodec is Opus as WebRTC negotiates it: 48 kHz, "2 channels" in SDP
// (always so for Opus; the encoder sends mono), in-band FEC welcome.
var opusCodec = pion.RTPCodecCapability{
	MimeType:    pion.MimeTypeOpus,
	ClockRate:   48000,
	Channels:    2,
	SDPFmtpLine: "minptime=10;useinbandfec=1",
}

// opusAnswer is the Opus the answer states (the transceiver's codec
// preference; pion would state the offer's parameters): what opusCodec
// says, and DTX asked of the caller (usedtx=1: a receiver states its
// preference in its own description, RFC 7587 7). A browser then sends
// about one packet in ten while its user is silent, and the input path
// plays those pauses as silence without a decoder run. Payload type 0:
// the offer's own.
var opusAnswer = pion.RTPCodecParameters{RTPCodecCapability: pion.RTPCodecCapability{
	MimeType:    opusCodec.MimeType,
	ClockRate:   opusCodec.ClockRate,
	Channels:    opusCodec.Channels,
	SDPFmtpLine: opusCodec.SDPFmtpLine + ";usedtx=1",
}}

// newAPI builds the pion API of one call: a media engine with Opus only,
// the RTCP sender and receiver reports, and the ICE settings of the
// Config. One per call, so that pion's log lines carry the call id.
//
// Of pion's default interceptors only the reports are kept: NACK is
// negotiated for video only (its interceptors would only parse every
// RTCP packet), the stats interceptor feeds GetStats, which the server
// never calls (its own counters are Stats), and TWCC would have the
// caller stamp every audio packet with a transport-wide sequence number
// and the server send a feedback packet every 100 ms per call, for a
// bandwidth estimate a 32 kbit/s voice stream does not need.
func (s *Server) newAPI(logs pionLoggers) (*pion.API, error) {
	me := &pion.MediaEngine{}
	if err := me.RegisterCodec(pion.RTPCodecParameters{RTPCodecCapability: opusCodec, PayloadType: opusPT}, pion.RTPCodecTypeAudio); err != nil {
		return nil, err
	}
	ir := &interceptor.Registry{}
	if err := pion.ConfigureRTCPReportsWithOptions(ir,
		[]report.ReceiverOption{report.WithReceiverLoggerFactory(logs)},
		report.WithSenderLoggerFactory(logs)); err != nil {
		return nil, err
	}
	se := pion.SettingEngine{LoggerFactory: logs}
	s.applySettings(&se)
	if s.opts.settings != nil {
		s.opts.settings(&se)
	}
	return pion.NewAPI(pion.WithMediaEngine(me), pion.WithInterceptorRegistry(ir), pion.WithSettingEngine(se)), nil
}

// applySettings writes the ICE part of the Config into se.
func (s *Server) applySettings(se *pion.SettingEngine) {
	cfg := s.cfg
	se.SetIncludeLoopbackCandidate(cfg.IncludeLoopback)
	if len(cfg.Interfaces) > 0 {
		allowed := slices.Clone(cfg.Interfaces)
		se.SetInterfaceFilter(func(name string) bool { return slices.Contains(allowed, name) })
	}
	types := make([]pion.NetworkType, 0, len(cfg.NetworkTypes))
	for _, nt := range cfg.NetworkTypes {
		if nt == "udp6" {
			types = append(types, pion.NetworkTypeUDP6)
		} else {
			types = append(types, pion.NetworkTypeUDP4)
		}
	}
	se.SetNetworkTypes(types)
	if cfg.UDPPortMax != 0 {
		// Validate checked the order, the only error.
		_ = se.SetEphemeralUDPPortRange(cfg.UDPPortMin, cfg.UDPPortMax)
	}
	if len(cfg.NAT1To1IPs) > 0 {
		// The only error is mixing with the deprecated NAT 1:1 setting,
		// which is never used.
		_ = se.SetICEAddressRewriteRules(pion.ICEAddressRewriteRule{
			External:        slices.Clone(cfg.NAT1To1IPs),
			AsCandidateType: pion.ICECandidateTypeHost,
			Mode:            pion.ICEAddressRewriteReplace,
		})
	}
	if cfg.MDNS {
		se.SetICEMulticastDNSMode(ice.MulticastDNSModeQueryAndGather)
	} else {
		se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	}
	se.SetICETimeouts(cfg.ICEDisconnectedTimeout, cfg.ICEFailedTimeout, cfg.ICEKeepalive)
}

// pionConfiguration is the peer connection's configuration: the STUN
// servers, if any.
func (s *Server) pionConfiguration() pion.Configuration {
	var conf pion.Configuration
	if len(s.cfg.STUNServers) > 0 {
		conf.ICEServers = []pion.ICEServer{{URLs: slices.Clone(s.cfg.STUNServers)}}
	}
	return conf
}
