package dtmf_test

import (
	"fmt"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip/dtmf"
)

// A press as sipp sends it (a first packet of duration 0 with the marker,
// updates, three end packets) is reported once, at its first end packet;
// a press whose end packets are lost is reported by Expire at Deadline.
func ExampleDetector() {
	d, err := dtmf.New(dtmf.Config{ClockRate: 8000})
	if err != nil {
		panic(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var buf [2]messages.DTMF
	feed := func(seq uint16, ts uint32, marker bool, payload []byte, ms int) {
		presses, err := d.Packet(buf[:0], seq, ts, marker, payload, start.Add(time.Duration(ms)*time.Millisecond))
		if err != nil {
			panic(err)
		}
		for _, p := range presses {
			fmt.Printf("pressed %c for %v\n", p.Digit, p.Duration)
		}
	}
	// Key 5: event 5, then E bit set, duration 800 (100 ms at 8 kHz).
	feed(1, 1000, true, []byte{5, 10, 0, 0}, 0)
	feed(2, 1000, false, []byte{5, 10, 1, 0x90}, 50)
	for range 3 {
		feed(3, 1000, false, []byte{5, 0x8a, 3, 0x20}, 100)
	}
	// Key #: the end packets never come.
	feed(4, 9000, true, []byte{11, 10, 0, 0}, 1000)
	feed(5, 9000, false, []byte{11, 10, 1, 0x90}, 1050)
	due, _ := d.Deadline()
	if p, ok := d.Expire(due); ok {
		fmt.Printf("pressed %c for %v (no end packet; reported %v after the last)\n", p.Digit, p.Duration, due.Sub(start.Add(1050*time.Millisecond)))
	}
	s := d.Stats()
	fmt.Println(s.Presses, "presses,", s.Repeats, "repeats,", s.Expired, "expired")
	// Output:
	// pressed 5 for 100ms
	// pressed # for 50ms (no end packet; reported 500ms after the last)
	// 2 presses, 2 repeats, 1 expired
}

// ParseInfo reads the body of a SIP INFO; the error's sentinel picks the
// answer.
func ExampleParseInfo() {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p, err := dtmf.ParseInfo("application/dtmf-relay", []byte("Signal=10\r\nDuration=160\r\n"), at)
	fmt.Printf("%c %v %v\n", p.Digit, p.Duration, err)
	_, err = dtmf.ParseInfo("application/dtmf-relay", []byte("Signal=!\r\n"), at)
	fmt.Println(err)
	_, err = dtmf.ParseInfo("text/plain", []byte("5"), at)
	fmt.Println(err)
	// Output:
	// * 160ms <nil>
	// dtmf: not a dtmf key: a hook flash
	// dtmf: unsupported info content type: not application/dtmf-relay or application/dtmf
}
