package sim

import "github.com/brisvox/brisvox/providers/providertest"

// The fakes moved to providers/providertest (issue 15 item 2). These
// names stay only until the last test still spelling them sim.X (one whose
// file held another change in progress) moves over; then this file goes.
type (
	// STTConfig is providertest.STTConfig.
	STTConfig = providertest.STTConfig
	// LLMConfig is providertest.LLMConfig.
	LLMConfig = providertest.LLMConfig
	// TTSConfig is providertest.TTSConfig.
	TTSConfig = providertest.TTSConfig
	// Response is providertest.Response.
	Response = providertest.Response
)

// NewMockSTT is providertest.NewMockSTT.
func NewMockSTT(cfg STTConfig, utterances []string) *providertest.MockSTT {
	return providertest.NewMockSTT(cfg, utterances)
}

// NewMockLLM is providertest.NewMockLLM.
func NewMockLLM(cfg LLMConfig, responses ...Response) *providertest.MockLLM {
	return providertest.NewMockLLM(cfg, responses...)
}

// NewMockTTS is providertest.NewMockTTS.
func NewMockTTS(cfg TTSConfig) *providertest.MockTTS { return providertest.NewMockTTS(cfg) }
