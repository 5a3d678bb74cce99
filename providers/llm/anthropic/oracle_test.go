package anthropic

// The decoder as it was before it moved to jsonscan.Scanner: encoding/json
// into the wire shapes below. It is kept here, and only here, as the
// oracle of FuzzDecoderMatchesOracle: the scanner decoder must give the
// same events and the same kinds of error for every data sequence.

import (
	"encoding/json"
	"fmt"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/httpx"
)

// Wire shapes of one streamed event. Fields the adapter does not use are
// not declared, so the decoder skips them; the block and the delta are
// values, not pointers, so a delta costs no allocation of its own (a
// start without a block, or a delta without a delta, has an empty type
// and is skipped, and a later delta of that block is a Protocol).
type (
	oracleEvent struct {
		Type         string          `json:"type"`
		Index        int             `json:"index"`
		Message      *oracleMessage  `json:"message"`
		ContentBlock oracleBlock     `json:"content_block"`
		Delta        oracleDelta     `json:"delta"`
		Usage        *oracleUsage    `json:"usage"`
		Error        *oracleAPIError `json:"error"`
	}
	oracleMessage struct {
		Usage oracleUsage `json:"usage"`
	}
	oracleUsage struct {
		InputTokens          int `json:"input_tokens"`
		OutputTokens         int `json:"output_tokens"`
		CacheReadInputTokens int `json:"cache_read_input_tokens"`
	}
	oracleBlock struct {
		Type      string `json:"type"`
		Text      string `json:"text"`
		ID        string `json:"id"`
		Name      string `json:"name"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
		Data      string `json:"data"`
	}
	oracleDelta struct {
		Type        string `json:"type"`
		StopReason  string `json:"stop_reason"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
	}
	oracleAPIError struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
)

// oracle turns event data into providers events. One per stream.
type oracle struct {
	ev       oracleEvent
	events   []providers.LLMEvent
	blocks   []block
	calls    int // tool_use blocks started so far
	thinking []thought
	thinkLen int // bytes held in thinking, against maxThinkingBytes
	input    int // input tokens of message_start
	cached   int
	stopped  bool   // message_stop seen
	stop     string // message_delta's stop_reason, normalised
	key      string
}

// init readies the decoder for a response.
func (d *oracle) init() {
	d.stop = ""
	d.blocks = d.blocks[:0]
	d.thinking = d.thinking[:0]
	d.calls, d.thinkLen, d.input, d.cached, d.stopped = 0, 0, 0, 0, false
}

// blockAt returns the block of index i, growing the table; an index out
// of range is a Protocol.
func (d *oracle) blockAt(i int) (*block, error) {
	if i < 0 || i >= maxBlocks {
		return nil, &providers.Protocol{Detail: fmt.Sprintf("content block index %d", i)}
	}
	for len(d.blocks) <= i {
		d.blocks = append(d.blocks, block{})
	}
	return &d.blocks[i], nil
}

// decode appends the events of one event's JSON to d.events (which the
// caller empties). JSON that does not parse, a delta of a block that was
// not started, or an event after message_stop is a *providers.Protocol;
// an error event is a *providers.Rejected with the status of its type.
// Unknown event, block and delta types are skipped (the API may add
// some); ping is skipped.
func (d *oracle) decode(data []byte) error {
	d.ev = oracleEvent{}
	if err := json.Unmarshal(data, &d.ev); err != nil {
		return &providers.Protocol{Detail: "event is not valid JSON: " + err.Error()}
	}
	ev := &d.ev
	if d.stopped {
		return &providers.Protocol{Detail: "event " + ev.Type + " after message_stop"}
	}
	switch ev.Type {
	case "message_start":
		if ev.Message != nil {
			d.input = ev.Message.Usage.InputTokens
			d.cached = ev.Message.Usage.CacheReadInputTokens
		}
	case "content_block_start":
		return d.start()
	case "content_block_delta":
		return d.delta()
	case "content_block_stop":
		b, err := d.blockAt(ev.Index)
		if err != nil {
			return err
		}
		if !b.open {
			return &providers.Protocol{Detail: fmt.Sprintf("content_block_stop of block %d, which is not open", ev.Index)}
		}
		b.open = false
	case "message_delta":
		if r := ev.Delta.StopReason; r != "" {
			d.stop = r
			if r == "max_tokens" {
				d.stop = providers.StopLength
			}
		}
		if ev.Usage != nil {
			u := providers.LLMEvent{Kind: providers.LLMUsage}
			u.Usage.InputTokens, u.Usage.OutputTokens, u.Usage.CachedInputTokens = d.input, ev.Usage.OutputTokens, d.cached
			d.events = append(d.events, u)
		}
	case "message_stop":
		d.stopped = true
		if len(d.thinking) > 0 {
			blob, err := d.thinkingData()
			if err != nil {
				return err
			}
			d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMProviderData, ProviderData: blob})
		}
	case "error":
		if ev.Error == nil {
			return &providers.Protocol{Detail: "error event without an error"}
		}
		status := statusOf(ev.Error.Type)
		if status == 0 {
			return &providers.Protocol{Detail: "error event of unknown type: " + httpx.Excerpt([]byte(ev.Error.Type+": "+ev.Error.Message), d.key)}
		}
		return &providers.Rejected{Status: status, Detail: httpx.Excerpt([]byte(ev.Error.Type+": "+ev.Error.Message), d.key)}
	}
	return nil
}

// start handles content_block_start.
func (d *oracle) start() error {
	ev := &d.ev
	b, err := d.blockAt(ev.Index)
	if err != nil {
		return err
	}
	if b.open || b.kind != blockNone {
		return &providers.Protocol{Detail: fmt.Sprintf("content block %d started twice", ev.Index)}
	}
	cb := &ev.ContentBlock
	b.open = true
	switch cb.Type {
	case "text":
		b.kind = blockText
		if cb.Text != "" {
			d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMText, Text: cb.Text})
		}
	case "tool_use":
		b.kind, b.tool = blockTool, d.calls
		d.calls++
		// The block's input is {} here; the arguments come as deltas.
		d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMToolCall, Index: b.tool, ID: cb.ID, Name: cb.Name})
	case "thinking":
		if err := d.charge(len(cb.Thinking) + len(cb.Signature)); err != nil {
			return err
		}
		b.kind, b.thought = blockThinking, len(d.thinking)
		d.thinking = append(d.thinking, thought{thinking: []byte(cb.Thinking), signature: []byte(cb.Signature)})
	case "redacted_thinking":
		if err := d.charge(len(cb.Data)); err != nil {
			return err
		}
		b.kind, b.thought = blockThinking, len(d.thinking)
		d.thinking = append(d.thinking, thought{redacted: true, data: cb.Data})
	}
	return nil
}

// charge counts n more bytes of thinking against the bound.
func (d *oracle) charge(n int) error {
	d.thinkLen += n
	if d.thinkLen > maxThinkingBytes {
		return &providers.Protocol{Detail: fmt.Sprintf("thinking blocks over %d bytes", maxThinkingBytes)}
	}
	return nil
}

// delta handles content_block_delta.
func (d *oracle) delta() error {
	ev := &d.ev
	b, err := d.blockAt(ev.Index)
	if err != nil {
		return err
	}
	if !b.open {
		return &providers.Protocol{Detail: fmt.Sprintf("delta of content block %d, which is not open", ev.Index)}
	}
	dl := &ev.Delta
	switch dl.Type {
	case "text_delta":
		if b.kind != blockText {
			return &providers.Protocol{Detail: fmt.Sprintf("text_delta in content block %d, not a text block", ev.Index)}
		}
		if dl.Text != "" {
			d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMText, Text: dl.Text})
		}
	case "input_json_delta":
		if b.kind != blockTool {
			return &providers.Protocol{Detail: fmt.Sprintf("input_json_delta in content block %d, not a tool_use block", ev.Index)}
		}
		if dl.PartialJSON != "" {
			d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMToolCall, Index: b.tool, Args: dl.PartialJSON})
		}
	case "thinking_delta":
		t, err := d.thoughtOf(b, "thinking_delta")
		if err != nil {
			return err
		}
		if err := d.charge(len(dl.Thinking)); err != nil {
			return err
		}
		t.thinking = append(t.thinking, dl.Thinking...)
	case "signature_delta":
		t, err := d.thoughtOf(b, "signature_delta")
		if err != nil {
			return err
		}
		if err := d.charge(len(dl.Signature)); err != nil {
			return err
		}
		t.signature = append(t.signature, dl.Signature...)
	}
	return nil
}

// thoughtOf is the thinking block a thinking or signature delta goes to.
func (d *oracle) thoughtOf(b *block, what string) (*thought, error) {
	if b.kind != blockThinking || d.thinking[b.thought].redacted {
		return nil, &providers.Protocol{Detail: fmt.Sprintf("%s in content block %d, not a thinking block", what, d.ev.Index)}
	}
	return &d.thinking[b.thought], nil
}

// thinkingData encodes the response's thinking blocks as the provider
// data blob.
func (d *oracle) thinkingData() ([]byte, error) {
	pd := providerData{Thinking: make([]json.RawMessage, len(d.thinking))}
	for i := range d.thinking {
		t := &d.thinking[i]
		w := wireThought{Type: "redacted_thinking", Data: &t.data}
		if !t.redacted {
			th, sig := string(t.thinking), string(t.signature)
			w = wireThought{Type: "thinking", Thinking: &th, Signature: &sig}
		}
		b, err := json.Marshal(&w)
		if err != nil {
			return nil, &providers.Protocol{Detail: "thinking block: " + err.Error()}
		}
		pd.Thinking[i] = b
	}
	b, err := json.Marshal(&pd)
	if err != nil {
		return nil, &providers.Protocol{Detail: "thinking blocks: " + err.Error()}
	}
	return b, nil
}
