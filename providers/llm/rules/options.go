package rules

import (
	"time"

	"github.com/brisvox/brisvox/providers"
)

// Options is the table of the options an agent file may set, in the
// order the docs show them.
func Options() providers.Options {
	var of providers.Of[Config]
	return providers.Options{
		Vendor: "rules", Key: providers.NoKey, Warm: providers.WarmNothing(),
		List: []providers.Option{
			of.Duration("first_token", 0, MaxDelay, func(c *Config, d time.Duration) { c.FirstToken = d }).WithDefault(time.Duration(0)).WithExample(250 * time.Millisecond).WithDoc("delay before the first token, a model's pace"),
			of.Duration("token_gap", 0, MaxDelay, func(c *Config, d time.Duration) { c.TokenGap = d }).WithDefault(time.Duration(0)).WithExample(40 * time.Millisecond).WithDoc("gap between tokens"),
		},
	}
}
