package openai

import (
	"io"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/internal/httpllm"
)

// stream is one response: the shared stream core reading Chat Completions
// chunks with this package's decoder. Recv returns text, call fragments
// and usage, then LLMDone, then io.EOF.
type stream struct {
	httpllm.Stream
	dec decoder
}

var (
	_ providers.LLMStream = (*stream)(nil)
	_ httpllm.Decoder     = (*decoder)(nil)
)

// Decode decodes one chunk; the data [DONE] is the end of the response.
func (d *decoder) Decode(data []byte, events []providers.LLMEvent) ([]providers.LLMEvent, bool, error) {
	if string(data) == "[DONE]" {
		return events, true, nil
	}
	d.events = events
	err := d.decode(data)
	return d.events, false, err
}

// End: the body may not end before [DONE].
func (d *decoder) End(events []providers.LLMEvent) ([]providers.LLMEvent, error) {
	return events, httpllm.Cut(cutDetail, io.EOF)
}

// StopReason is the last finish_reason ("length" is already
// providers.StopLength).
func (d *decoder) StopReason() string { return d.finish }
