package anthropic

import (
	"encoding/json"
	"fmt"
	"github.com/brisvox/brisvox/providers/internal/jsonscan"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/httpx"
)

// maxBlocks bounds the content block index of a response: a higher index
// is a protocol error, never an unbounded table.
const maxBlocks = 1024

// event is one streamed event as the decoder scanned it. Its string
// fields are held as they are in the data (raw JSON strings: quotes and
// escapes, sub-slices of the data, nothing copied) and read only when the
// event's type needs them, so a field may come before or after "type".
// The fields are those of the wire shapes the adapter reads; every other
// member is skipped, its grammar checked. A member given twice, or given
// null, reads as encoding/json reads it into a struct: a null string,
// number or object value keeps what came before (content_block, delta,
// message.usage), a null message, usage or error (pointers in the wire
// shapes) drops it, and a second object merges into the first.
type event struct {
	typ     []byte
	index   int
	message bool  // "message" is an object
	msgUse  usage // message.usage
	block   blockFields
	delta   deltaFields
	usage   bool // "usage" is an object
	use     usage
	err     bool // "error" is an object
	errType []byte
	errMsg  []byte
}

// usage is a usage object's token counts.
type usage struct {
	input, output, cached int
}

// blockFields are a content_block's members: raw JSON strings.
type blockFields struct {
	typ, text, id, name, thinking, signature, data []byte
}

// deltaFields are a delta's members (content_block_delta and
// message_delta): raw JSON strings.
type deltaFields struct {
	typ, stopReason, text, partialJSON, thinking, signature []byte
}

// The kinds of content blocks the decoder tracks.
const (
	blockNone     uint8 = iota // not started, or a type the adapter skips
	blockText                  // text: spoken
	blockTool                  // tool_use: call fragments
	blockThinking              // thinking or redacted_thinking: provider data
)

// block is the state of one content block of the response.
type block struct {
	kind    uint8
	open    bool
	tool    int // blockTool: the call's index among the response's calls
	thought int // blockThinking: index into decoder.thinking
}

// maxThinkingBytes bounds the thinking text, signatures and redacted data
// of one response: more is a protocol error, never an unbounded buffer.
const maxThinkingBytes = 4 << 20

// thought is one thinking block being received: its deltas are appended
// (no quadratic string concatenation) and it is encoded once, at
// message_stop.
type thought struct {
	redacted  bool
	thinking  []byte
	signature []byte
	data      string
}

// wireThought is a thinking block as the API sends it and wants it back.
type wireThought struct {
	Type      string  `json:"type"`
	Thinking  *string `json:"thinking,omitempty"`
	Signature *string `json:"signature,omitempty"`
	Data      *string `json:"data,omitempty"`
}

// providerData is the LLMProviderData blob: the response's thinking
// blocks, in order, each as the content block to send back.
type providerData struct {
	Thinking []json.RawMessage `json:"thinking"`
}

// statusOf maps the type of an error event to the HTTP status the API
// gives the same error; 0: not a known type.
func statusOf(typ string) int {
	switch typ {
	case "invalid_request_error":
		return 400
	case "authentication_error":
		return 401
	case "permission_error":
		return 403
	case "not_found_error":
		return 404
	case "request_too_large":
		return 413
	case "rate_limit_error":
		return 429
	case "api_error":
		return 500
	case "overloaded_error":
		return 529
	}
	return 0
}

// decoder turns event data into providers events. One per stream.
type decoder struct {
	sc       jsonscan.Scanner // the event's data
	sub      jsonscan.Scanner // one raw string of it, when it is read
	ev       event
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
func (d *decoder) init() {
	d.stop = ""
	d.blocks = d.blocks[:0]
	d.thinking = d.thinking[:0]
	d.calls, d.thinkLen, d.input, d.cached, d.stopped = 0, 0, 0, 0, false
}

// blockAt returns the block of index i, growing the table; an index out
// of range is a Protocol.
func (d *decoder) blockAt(i int) (*block, error) {
	if i < 0 || i >= maxBlocks {
		return nil, &providers.Protocol{Detail: fmt.Sprintf("content block index %d", i)}
	}
	for len(d.blocks) <= i {
		d.blocks = append(d.blocks, block{})
	}
	return &d.blocks[i], nil
}

// scan reads one event's data into d.ev; the error wraps jsonscan.ErrJSON.
// It accepts and refuses what encoding/json does decoding into the wire
// shapes (a value of the wrong type in a member the adapter reads is an
// error, whatever the event's type), except that member names match
// exactly, not folding case.
func (d *decoder) scan(data []byte) error {
	s, ev := &d.sc, &d.ev
	*ev = event{}
	s.Reset(data)
	if s.Object() {
		for s.More() {
			switch string(s.Key()) {
			case "type":
				rawStr(s, &ev.typ)
			case "index":
				intField(s, &ev.index)
			case "message":
				if s.Null() {
					ev.message, ev.msgUse = false, usage{}
				} else if s.Object() {
					ev.message = true
					for s.More() {
						if string(s.Key()) == "usage" {
							scanUsage(s, &ev.msgUse)
						} else {
							s.Skip()
						}
					}
				}
			case "content_block":
				scanBlock(s, &ev.block)
			case "delta":
				scanDelta(s, &ev.delta)
			case "usage":
				if s.Null() {
					ev.usage, ev.use = false, usage{}
				} else if s.Peek() == '{' {
					ev.usage = true
					scanUsage(s, &ev.use)
				} else {
					s.Object() // refuses it
				}
			case "error":
				if s.Null() {
					ev.err, ev.errType, ev.errMsg = false, nil, nil
				} else if s.Object() {
					ev.err = true
					for s.More() {
						switch string(s.Key()) {
						case "type":
							rawStr(s, &ev.errType)
						case "message":
							rawStr(s, &ev.errMsg)
						default:
							s.Skip()
						}
					}
				}
			default:
				s.Skip()
			}
		}
	}
	return s.Done()
}

// scanUsage reads a usage object's members into u; null keeps u.
func scanUsage(s *jsonscan.Scanner, u *usage) {
	if !s.Object() {
		return
	}
	for s.More() {
		switch string(s.Key()) {
		case "input_tokens":
			intField(s, &u.input)
		case "output_tokens":
			intField(s, &u.output)
		case "cache_read_input_tokens":
			intField(s, &u.cached)
		default:
			s.Skip()
		}
	}
}

// scanBlock reads a content_block's members into b; null keeps b.
func scanBlock(s *jsonscan.Scanner, b *blockFields) {
	if !s.Object() {
		return
	}
	for s.More() {
		switch string(s.Key()) {
		case "type":
			rawStr(s, &b.typ)
		case "text":
			rawStr(s, &b.text)
		case "id":
			rawStr(s, &b.id)
		case "name":
			rawStr(s, &b.name)
		case "thinking":
			rawStr(s, &b.thinking)
		case "signature":
			rawStr(s, &b.signature)
		case "data":
			rawStr(s, &b.data)
		default:
			s.Skip()
		}
	}
}

// scanDelta reads a delta's members into dl; null keeps dl.
func scanDelta(s *jsonscan.Scanner, dl *deltaFields) {
	if !s.Object() {
		return
	}
	for s.More() {
		switch string(s.Key()) {
		case "type":
			rawStr(s, &dl.typ)
		case "stop_reason":
			rawStr(s, &dl.stopReason)
		case "text":
			rawStr(s, &dl.text)
		case "partial_json":
			rawStr(s, &dl.partialJSON)
		case "thinking":
			rawStr(s, &dl.thinking)
		case "signature":
			rawStr(s, &dl.signature)
		default:
			s.Skip()
		}
	}
}

// rawStr reads a string member as its raw JSON into p; null keeps p, any
// other value is an error.
func rawStr(s *jsonscan.Scanner, p *[]byte) {
	switch s.Peek() {
	case '"':
		*p = s.Raw()
	case 'n':
		s.Null()
	default:
		s.StrBytes() // refuses it
	}
}

// intField reads an integer member into p; null keeps p.
func intField(s *jsonscan.Scanner, p *int) {
	if !s.Null() {
		*p = s.Int()
	}
}

// bytesOf is the text of a raw JSON string that scan checked ("" for
// nil); valid until the next call of bytesOf or stringOf.
func (d *decoder) bytesOf(raw []byte) []byte {
	if raw == nil {
		return nil
	}
	d.sub.Reset(raw)
	return d.sub.StrBytes()
}

// stringOf is the text of a raw JSON string that scan checked: the one
// allocation of a delta.
func (d *decoder) stringOf(raw []byte) string {
	if raw == nil {
		return ""
	}
	d.sub.Reset(raw)
	return d.sub.Str()
}

// decode appends the events of one event's JSON to d.events (which the
// caller empties). JSON that does not parse, a delta of a block that was
// not started, or an event after message_stop is a *providers.Protocol;
// an error event is a *providers.Rejected with the status of its type.
// Unknown event, block and delta types are skipped (the API may add
// some); ping is skipped.
func (d *decoder) decode(data []byte) error {
	if err := d.scan(data); err != nil {
		return &providers.Protocol{Detail: "event is not valid JSON: " + err.Error()}
	}
	ev := &d.ev
	if d.stopped {
		return &providers.Protocol{Detail: "event " + d.stringOf(ev.typ) + " after message_stop"}
	}
	switch string(d.bytesOf(ev.typ)) {
	case "message_start":
		if ev.message {
			d.input = ev.msgUse.input
			d.cached = ev.msgUse.cached
		}
	case "content_block_start":
		return d.start()
	case "content_block_delta":
		return d.delta()
	case "content_block_stop":
		b, err := d.blockAt(ev.index)
		if err != nil {
			return err
		}
		if !b.open {
			return &providers.Protocol{Detail: fmt.Sprintf("content_block_stop of block %d, which is not open", ev.index)}
		}
		b.open = false
	case "message_delta":
		if r := d.bytesOf(ev.delta.stopReason); len(r) > 0 {
			if string(r) == "max_tokens" {
				d.stop = providers.StopLength
			} else {
				d.stop = string(r)
			}
		}
		if ev.usage {
			u := providers.LLMEvent{Kind: providers.LLMUsage}
			u.Usage.InputTokens, u.Usage.OutputTokens, u.Usage.CachedInputTokens = d.input, ev.use.output, d.cached
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
		if !ev.err {
			return &providers.Protocol{Detail: "error event without an error"}
		}
		typ := d.stringOf(ev.errType)
		msg := httpx.Excerpt([]byte(typ+": "+d.stringOf(ev.errMsg)), d.key)
		status := statusOf(typ)
		if status == 0 {
			return &providers.Protocol{Detail: "error event of unknown type: " + msg}
		}
		return &providers.Rejected{Status: status, Detail: msg}
	}
	return nil
}

// start handles content_block_start.
func (d *decoder) start() error {
	ev := &d.ev
	b, err := d.blockAt(ev.index)
	if err != nil {
		return err
	}
	if b.open || b.kind != blockNone {
		return &providers.Protocol{Detail: fmt.Sprintf("content block %d started twice", ev.index)}
	}
	cb := &ev.block
	b.open = true
	switch string(d.bytesOf(cb.typ)) {
	case "text":
		b.kind = blockText
		if text := d.stringOf(cb.text); text != "" {
			d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMText, Text: text})
		}
	case "tool_use":
		b.kind, b.tool = blockTool, d.calls
		d.calls++
		// The block's input is {} here; the arguments come as deltas.
		d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMToolCall, Index: b.tool, ID: d.stringOf(cb.id), Name: d.stringOf(cb.name)})
	case "thinking":
		th := append([]byte(nil), d.bytesOf(cb.thinking)...)
		sig := append([]byte(nil), d.bytesOf(cb.signature)...)
		if err := d.charge(len(th) + len(sig)); err != nil {
			return err
		}
		b.kind, b.thought = blockThinking, len(d.thinking)
		d.thinking = append(d.thinking, thought{thinking: th, signature: sig})
	case "redacted_thinking":
		data := d.stringOf(cb.data)
		if err := d.charge(len(data)); err != nil {
			return err
		}
		b.kind, b.thought = blockThinking, len(d.thinking)
		d.thinking = append(d.thinking, thought{redacted: true, data: data})
	}
	return nil
}

// charge counts n more bytes of thinking against the bound.
func (d *decoder) charge(n int) error {
	d.thinkLen += n
	if d.thinkLen > maxThinkingBytes {
		return &providers.Protocol{Detail: fmt.Sprintf("thinking blocks over %d bytes", maxThinkingBytes)}
	}
	return nil
}

// delta handles content_block_delta. A text delta or an argument
// fragment allocates its string and nothing else.
func (d *decoder) delta() error {
	ev := &d.ev
	b, err := d.blockAt(ev.index)
	if err != nil {
		return err
	}
	if !b.open {
		return &providers.Protocol{Detail: fmt.Sprintf("delta of content block %d, which is not open", ev.index)}
	}
	dl := &ev.delta
	switch string(d.bytesOf(dl.typ)) {
	case "text_delta":
		if b.kind != blockText {
			return &providers.Protocol{Detail: fmt.Sprintf("text_delta in content block %d, not a text block", ev.index)}
		}
		if text := d.stringOf(dl.text); text != "" {
			d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMText, Text: text})
		}
	case "input_json_delta":
		if b.kind != blockTool {
			return &providers.Protocol{Detail: fmt.Sprintf("input_json_delta in content block %d, not a tool_use block", ev.index)}
		}
		if args := d.stringOf(dl.partialJSON); args != "" {
			d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMToolCall, Index: b.tool, Args: args})
		}
	case "thinking_delta":
		t, err := d.thoughtOf(b, "thinking_delta")
		if err != nil {
			return err
		}
		th := d.bytesOf(dl.thinking)
		if err := d.charge(len(th)); err != nil {
			return err
		}
		t.thinking = append(t.thinking, th...)
	case "signature_delta":
		t, err := d.thoughtOf(b, "signature_delta")
		if err != nil {
			return err
		}
		sig := d.bytesOf(dl.signature)
		if err := d.charge(len(sig)); err != nil {
			return err
		}
		t.signature = append(t.signature, sig...)
	}
	return nil
}

// thoughtOf is the thinking block a thinking or signature delta goes to.
func (d *decoder) thoughtOf(b *block, what string) (*thought, error) {
	if b.kind != blockThinking || d.thinking[b.thought].redacted {
		return nil, &providers.Protocol{Detail: fmt.Sprintf("%s in content block %d, not a thinking block", what, d.ev.index)}
	}
	return &d.thinking[b.thought], nil
}

// thinkingData encodes the response's thinking blocks as the provider
// data blob.
func (d *decoder) thinkingData() ([]byte, error) {
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
