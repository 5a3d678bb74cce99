package sip_test

import (
	"context"
	"testing"
	"time"

	"github.com/brisvox/brisvox/sip"
)

// TestSippTransfer: a sipp caller is transferred by Call.Transfer: REFER
// (Refer-To checked by the scenario), 202, NOTIFY 100 and 200, then our
// BYE, which the scenario waits for (sipp fails without it). Catches the
// hang-up after a successful transfer left out (sipp times out waiting
// for the BYE) and a number referred as anything but its tel: URI.
func TestSippTransfer(t *testing.T) {
	r := newRig(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	run := r.startSipp(ctx, "testdata/sipp/transfer.xml")
	var c *sip.Call
	select {
	case c = <-r.calls:
	case <-run.done:
		t.Fatalf("sipp ended before the call was answered: %v\n%s", run.err, run.out)
	}
	if err := c.Transfer(ctx, "+33123456789"); err != nil {
		t.Errorf("Transfer: %v", err)
	}
	// Without our BYE the call would end only at the media timeout (30 s).
	select {
	case <-run.done:
	case <-time.After(10 * time.Second):
		_ = c.Close()
		<-run.done
		t.Fatalf("sipp saw no BYE within 10 s of the transfer\n%s", run.out)
	}
	_ = c.Close()
	if run.err != nil {
		t.Fatalf("sipp: %v\n%s", run.err, run.out)
	}
}
