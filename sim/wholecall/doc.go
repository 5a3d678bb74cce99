// Package wholecall holds whole simulated calls over real provider
// adapters: the tool scenarios S1-S6 through the production actor tree
// with the OpenAI, Anthropic and Gemini adapters on their vendor mocks
// (sim.ToolCasesOver), and the keyless agent (the rules engine with the
// stock tools) answering callers. They stand above the actors, with the
// simulator, so that no provider package's tests compile the actor tree;
// the package has only tests.
package wholecall
