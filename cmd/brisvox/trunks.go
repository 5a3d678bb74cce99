package main

import (
	"fmt"
	"strings"

	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/sip"
)

// sipTrunks maps the file's [transports.sip.trunks.NAME] tables onto the
// SIP transport's trunks, by name, reading each digest password from the
// variable the trunk names (lookupEnv: os.LookupEnv in serve). An error
// names the trunk, the setting and the variable, never a value; each
// trunk is checked with sip.TrunkConfig.Validate, so a value the file's
// check let through and sip refuses stops serve here rather than at the
// first dial. No trunk: a nil map.
func sipTrunks(t agentfile.SIP, lookupEnv func(string) (string, bool)) (map[string]sip.TrunkConfig, error) {
	if len(t.Trunks) == 0 {
		return nil, nil
	}
	out := make(map[string]sip.TrunkConfig, len(t.Trunks))
	for _, tr := range t.Trunks {
		path := "transports.sip.trunks." + tr.Name
		c := sip.TrunkConfig{
			Address:         tr.Address.V,
			Transport:       strings.ToUpper(tr.Transport.V),
			OutboundProxy:   tr.OutboundProxy.V,
			AuthUser:        tr.AuthUser.V,
			From:            tr.From.V,
			MaxCalls:        tr.MaxCalls.V,
			CallsPerSecond:  tr.CallsPerSecond.V,
			EarlyMedia:      tr.EarlyMedia.V,
			DTMF:            tr.DTMF.V,
			Transfer:        tr.Transfer.V,
			Register:        tr.Register.V,
			RegisterExpires: tr.RegisterExpires.V,
		}
		for _, r := range tr.Routes {
			c.Routes = append(c.Routes, r.V)
		}
		if env := tr.AuthPasswordEnv.V; env != "" {
			pass, ok := lookupEnv(env)
			if !ok || pass == "" {
				return nil, fmt.Errorf("%s.auth_password_env: %s is not set", path, env)
			}
			c.AuthPassword = pass
		}
		if err := c.Validate(); err != nil {
			// Validate names the field, never its value.
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out[tr.Name] = c
	}
	return out, nil
}
