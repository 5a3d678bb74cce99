package agentbuild

import (
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/providers/llm/rules"
)

// Guide is what the agent's page tells a caller (GET /agent): its name,
// the file's description, the phrases the rules provider understands, and
// the tools the file enables (names only).
func (a *Agent) Guide() serve.Guide {
	g := serve.Guide{Name: a.file.Name.V, Description: a.file.Description.V}
	if _, ok := a.llm.(*rules.LLM); ok {
		g.Examples = rules.Examples() // a real model has no such list
	}
	for _, t := range a.file.Tools.Enabled {
		g.Tools = append(g.Tools, t.V)
	}
	return g
}

var _ serve.Guider = (*Agent)(nil)
