package rtp

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media"
)

func TestConfigValidate(t *testing.T) {
	ports := &Ports{}
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"defaults", Config{Ports: ports}, true},
		{"no ports", Config{}, false},
		{"rate 44100", Config{Ports: ports, InputRate: 44100}, false},
		{"rates 8k/48k", Config{Ports: ports, InputRate: 8000, OutputRate: 48000}, true},
		{"latch run 0 takes the default", Config{Ports: ports, LatchRun: 0}, true},
		{"latch run too long", Config{Ports: ports, LatchRun: 65}, false},
		{"negative candidates", Config{Ports: ports, Candidates: -1}, false},
		{"rtcp interval too short", Config{Ports: ports, RTCPInterval: time.Millisecond}, false},
		{"negative media timeout disables", Config{Ports: ports, MediaTimeout: -1}, true},
		{"queue too long", Config{Ports: ports, OutputQueue: 1 << 20}, false},
		{"jitter delays out of order", Config{Ports: ports, Jitter: media.JitterConfig{MinDelay: 5, MaxDelay: 2}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Fatalf("Validate = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestParamsValidate(t *testing.T) {
	base := pcmuParams()
	with := func(f func(*Params)) Params { p := base; f(&p); return p }
	tests := []struct {
		name string
		p    Params
		ok   bool
	}{
		{"pcmu", base, true},
		{"pcma", with(func(p *Params) { p.Codec, p.PayloadType = CodecPCMA, 8 }), true},
		{"g722 clock 8000 audio 16000", with(func(p *Params) { p.Codec, p.PayloadType = CodecG722, 9 }), true},
		{"g722 clock 16000 is wrong", with(func(p *Params) { p.Codec, p.PayloadType, p.ClockRate = CodecG722, 9, 16000 }), false},
		{"opus", with(func(p *Params) { p.Codec, p.PayloadType = CodecOpus, 111 }), true},
		{"opus ptime out 30", with(func(p *Params) { p.Codec, p.PayloadType, p.PtimeOut = CodecOpus, 111, 30*time.Millisecond }), false},
		{"unknown codec", with(func(p *Params) { p.Codec = "GSM" }), false},
		{"ptime in 30 (sipp)", with(func(p *Params) { p.PtimeIn = 30 * time.Millisecond }), true},
		{"ptime in 5", with(func(p *Params) { p.PtimeIn = 5 * time.Millisecond }), false},
		{"ptime in 80", with(func(p *Params) { p.PtimeIn = 80 * time.Millisecond }), false},
		{"ptime out 25", with(func(p *Params) { p.PtimeOut = 25 * time.Millisecond }), false},
		{"events on the audio pt", with(func(p *Params) { p.EventPayloadType = 0 }), false},
		{"audio pt is cn", with(func(p *Params) { p.PayloadType = 13 }), false},
		{"pt 128", with(func(p *Params) { p.PayloadType = 128 }), false},
		{"no remote", with(func(p *Params) { p.RemoteRTP = netip.AddrPort{} }), false},
		{"ipv6 remote", with(func(p *Params) { p.RemoteRTP = netip.MustParseAddrPort("[::1]:4000") }), true},
		{"bad direction", with(func(p *Params) { p.Direction = 9 }), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidParams)) {
				t.Fatalf("Validate = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestParamsRTCPAddress(t *testing.T) {
	tests := []struct {
		name string
		p    Params
		want netip.AddrPort
	}{
		{"next port", Params{RemoteRTP: peerRTP}, peerRTCP},
		{"mux", Params{RemoteRTP: peerRTP, RTCPMux: true}, peerRTP},
		{"a=rtcp", Params{RemoteRTP: peerRTP, RemoteRTCP: attacker}, attacker},
		{"v4-mapped unmapped", Params{RemoteRTP: netip.MustParseAddrPort("[::ffff:10.0.0.2]:30000")}, peerRTCP},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.withDefaults().RemoteRTCP; got != tc.want {
				t.Fatalf("RemoteRTCP = %v, want %v", got, tc.want)
			}
		})
	}
}
