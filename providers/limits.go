package providers

// Limit is a scarce resource a provider holds for calls: a pool of local
// decoders, a vendor's concurrency limit. The agent's capacity is the
// smallest of the calls its limits allow and the call limit.
type Limit struct {
	// Name names the resource in reports ("pocketsphinx decoders").
	Name string
	// Size is how many exist.
	Size int
	// PerCall: a call holds one for its whole life, so Size bounds the
	// calls. Otherwise a call holds one only while it uses it (a decoder
	// while the caller speaks, up to the final), and CallsPerUnit calls
	// share one.
	PerCall bool
	// CallsPerUnit is how many calls one unit serves when it is not held
	// per call (>= 1).
	CallsPerUnit int
}

// Calls is how many calls the limit allows.
func (l Limit) Calls() int {
	if l.PerCall || l.CallsPerUnit < 1 {
		return l.Size
	}
	return l.Size * l.CallsPerUnit
}

// Limited is a provider with scarce resources to report.
type Limited interface {
	Limits() []Limit
}
