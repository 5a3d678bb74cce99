package rtp_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip/rtp"
)

// Example shows a session's life as the SIP layer drives it: bind when
// the INVITE comes (the answer carries the port), start with what the
// offer/answer agreed, update on a re-INVITE, close at the end.
func Example() {
	ports, err := rtp.NewPorts(rtp.PortsConfig{Addr: netip.MustParseAddr("127.0.0.1"), Min: 20000, Max: 20999})
	if err != nil {
		panic(err)
	}
	s, err := rtp.New(rtp.Config{
		Ports:     ports,
		CallID:    "call-1",
		InputRate: 16000, // what the STT wants
		OnEvent: func(seq uint16, ts uint32, marker bool, payload []byte, at time.Time) {
			// Hand the RFC 4733 payload to sip/dtmf (copy it: it is reused).
		},
	})
	if errors.Is(err, rtp.ErrNoPorts) {
		fmt.Println("answer 503")
		return
	}
	if err != nil {
		panic(err)
	}
	defer s.Close()
	fmt.Println("the answer's m= port is", s.LocalRTP().Port())

	p := rtp.Params{
		Codec:            rtp.CodecPCMA,
		PayloadType:      8,
		Events:           true,
		EventPayloadType: 101,
		RemoteRTP:        netip.MustParseAddrPort("192.0.2.10:40000"),
		PtimeIn:          30 * time.Millisecond,
	}
	if err := s.Start(p); err != nil {
		panic(err)
	}
	// A re-INVITE puts the call on hold (the caller sends sendonly).
	p.Direction = rtp.RecvOnly
	if err := s.Update(p); err != nil {
		panic(err)
	}
	var f messages.AudioFrame
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.ReadFrame(ctx, &f) // 20 ms at 16 kHz
}
