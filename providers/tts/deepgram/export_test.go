package aura

// WithoutProbe turns the ping probe off: the broken variant that shows the
// contract suite's held-text check bites.
func WithoutProbe(c *Config) { c.noProbe = true }
