package serve

import (
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/providers/providertest"
)

// TestReadyzDetails: a transport's readiness detail (the SIP
// registrations) is shown under /readyz's details, read at each probe,
// and does not turn the node unready. Mutation caught: details not
// copied into the body (no "details" key).
func TestReadyzDetails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ln, stop := serving(t, Config{MaxCalls: 1}, &simAgent{responses: []providertest.Response{{Text: "Hi."}}})
		state := "registering"
		s.AddReadiness("sip_registrations", func() any {
			return []map[string]string{{"trunk": "carrier", "state": state}}
		})
		for _, want := range []string{"registering", "failed"} {
			state = want
			code, body := get(t, ln, "/readyz")
			d, _ := body["details"].(map[string]any)
			regs, _ := d["sip_registrations"].([]any)
			if code != 200 || len(regs) != 1 || regs[0].(map[string]any)["state"] != want {
				t.Errorf("readyz %d %v, want 200 with the registration %s", code, body, want)
			}
		}
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
}
