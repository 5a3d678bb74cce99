package providers

// Named is a provider that names itself for the call record's account of
// what a call used (messages.ProviderUsage): Vendor is its name as an
// agent file writes it ("openai", "deepgram", "flite"), Model the model it
// asks the vendor for ("" where it has none, or where the model is a local
// file whose path is not the record's business). Optional: the stages
// record a provider without it as vendor "unknown". Neither may hold a
// key or a URL.
type Named interface {
	Vendor() string
	Model() string
}

// NameOf is p's vendor and model, "unknown" and "" when p is not Named.
func NameOf(p any) (vendor, model string) {
	if n, ok := p.(Named); ok {
		return n.Vendor(), n.Model()
	}
	return "unknown", ""
}
