package gemini

import (
	"encoding/json"
	"fmt"
	"github.com/brisvox/brisvox/providers/internal/jsonscan"
	"strconv"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/httpx"
)

// maxCalls bounds the function calls of one response: more is a protocol
// error, never an unbounded table.
const maxCalls = 1024

// maxSignatureBytes bounds the thought signatures of one response's text
// parts.
const maxSignatureBytes = 4 << 20

// providerData is the LLMProviderData blob: the thought signatures of the
// response's text parts, in order. The next request puts the first on the
// assistant message's text part.
type providerData struct {
	TextSignatures []string `json:"textSignatures"`
}

// usage is a chunk's usageMetadata, the fields the adapter reports.
type usage struct {
	prompt, candidates, cached int
}

// The chunk as read, before any of it is acted on: a chunk is a
// GenerateContentResponse, of which the adapter reads candidates[0]'s
// parts and finishReason, the usageMetadata and an in-stream error.
// Strings are kept as their JSON tokens (quotes and escapes included),
// slices of the chunk's data that are decoded only when an event needs
// them; nil is the empty string.
//
// The fields follow what encoding/json did when it decoded a chunk into
// the structs the adapter had before (oracle_test.go keeps them), down to
// its treatment of a repeated key: the later value merges into the
// earlier one (null leaves a string, a number, a boolean or a struct as it
// was, and clears a pointer or a slice); an array decodes element by
// element into the slice it finds, so a shorter array truncates it and a
// later longer one finds the truncated elements again, as they were, up
// to the longest length reached (the slice's backing array; an empty
// array or null gives a new one).
type (
	chunkIn struct {
		cand     candIn // candidates[0]
		nCand    int
		other    candIn // candidates[1:], checked and dropped
		usage    usage
		hasUsage bool
		errCode  int
		errMsg   []byte
		errStat  []byte
		hasErr   bool
	}
	candIn struct {
		parts  []partIn // up to the longest length reached; see above
		nParts int
		finish []byte
	}
	partIn struct {
		text    []byte
		hasText bool // text is not null (a *string in encoding/json terms)
		thought bool
		sig     []byte
		hasCall bool // functionCall is not null
		callID  []byte
		name    []byte
		args    []byte // the value as it is; nil when absent
	}
)

// reset empties a candidate, keeping its parts' storage.
func (c *candIn) reset() {
	c.parts, c.nParts, c.finish = c.parts[:0], 0, nil
}

// decoder turns chunk data into providers events. One per stream.
type decoder struct {
	events   []providers.LLMEvent
	calls    int // function calls so far
	sigs     []string
	sigLen   int
	usage    *usage // the last seen
	lastU    usage
	finished bool   // a finishReason seen
	stop     string // the finishReason, normalised
	key      string

	sc  jsonscan.Scanner // the chunk
	str jsonscan.Scanner // one string token of the chunk
	in  chunkIn
	buf []byte // a call's ID, name and arguments, made one string
}

// init readies the decoder for a response.
func (d *decoder) init() {
	d.calls, d.sigLen, d.finished, d.stop, d.usage = 0, 0, false, "", nil
	d.sigs = d.sigs[:0]
}

// decode appends the events of one chunk to d.events (which the caller
// empties). JSON that does not parse or is not of a chunk's shape, or a
// chunk after a finishReason with content, is a *providers.Protocol; an
// error object is a *providers.Rejected with its code (a Protocol without
// a valid code). The chunk is read whole before any of it is acted on.
func (d *decoder) decode(data []byte) error {
	in := &d.in
	in.cand.reset()
	in.nCand, in.hasUsage, in.hasErr = 0, false, false
	d.sc.Reset(data)
	d.readChunk()
	if err := d.sc.Done(); err != nil {
		return &providers.Protocol{Detail: "chunk is not valid JSON: " + err.Error()}
	}
	if in.hasErr {
		msg := httpx.Excerpt([]byte(d.text(in.errStat)+": "+d.text(in.errMsg)), d.key)
		if in.errCode < 400 || in.errCode > 599 {
			return &providers.Protocol{Detail: "error object without a valid code: " + msg}
		}
		return &providers.Rejected{Status: in.errCode, Detail: msg}
	}
	if in.hasUsage {
		d.lastU = in.usage
		d.usage = &d.lastU
	}
	if in.nCand == 0 {
		return nil
	}
	cand := &in.cand
	if d.finished && cand.nParts > 0 {
		return &providers.Protocol{Detail: "content after the finishReason"}
	}
	for i := range cand.nParts {
		if err := d.part(&cand.parts[i]); err != nil {
			return err
		}
	}
	if cand.finish != nil {
		switch r := d.token(cand.finish); string(r) {
		case "":
		case "MAX_TOKENS":
			d.finished, d.stop = true, providers.StopLength
		case "STOP":
			d.finished, d.stop = true, "STOP"
		default:
			d.finished, d.stop = true, string(r)
		}
	}
	return nil
}

// part handles one part of a candidate's content.
func (d *decoder) part(p *partIn) error {
	switch {
	case p.hasCall:
		return d.call(p)
	case p.thought:
		// Thinking is never spoken; its signature, if any, rides along
		// with the text parts' ones.
		return d.keepSig(p.sig)
	case p.hasText:
		if t := d.token(p.text); len(t) > 0 {
			d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMText, Text: string(t)})
		}
		return d.keepSig(p.sig)
	}
	return nil
}

// call makes the event of a functionCall part: its ID (or one made up),
// name and arguments are one string, one allocation.
func (d *decoder) call(p *partIn) error {
	name := d.token(p.name)
	if len(name) == 0 {
		return &providers.Protocol{Detail: "functionCall without a name"}
	}
	if d.calls >= maxCalls {
		return &providers.Protocol{Detail: fmt.Sprintf("over %d function calls", maxCalls)}
	}
	args := p.args
	if len(args) > 0 && string(args) != "null" && args[0] != '{' {
		return &providers.Protocol{Detail: "functionCall args is not an object"}
	}
	b := append(d.buf[:0], name...)
	nameEnd := len(b)
	if id := d.token(p.callID); len(id) > 0 {
		b = append(b, id...)
	} else {
		b = strconv.AppendInt(append(b, "gc"...), int64(d.calls), 10)
	}
	idEnd := len(b)
	if len(args) == 0 || string(args) == "null" {
		b = append(b, "{}"...)
	} else {
		b = append(b, args...)
	}
	d.buf = b
	s := string(b)
	ev := providers.LLMEvent{Kind: providers.LLMToolCall, Index: d.calls, ID: s[nameEnd:idEnd], Name: s[:nameEnd], Args: s[idEnd:]}
	if sig := d.text(p.sig); sig != "" {
		ev.ProviderData, _ = json.Marshal(sig) // a string always encodes
	}
	d.calls++
	d.events = append(d.events, ev)
	return nil
}

// keepSig keeps a text part's signature (a string token) for the provider
// data.
func (d *decoder) keepSig(tok []byte) error {
	sig := d.token(tok)
	if len(sig) == 0 {
		return nil
	}
	d.sigLen += len(sig)
	if d.sigLen > maxSignatureBytes {
		return &providers.Protocol{Detail: fmt.Sprintf("thought signatures over %d bytes", maxSignatureBytes)}
	}
	d.sigs = append(d.sigs, string(sig))
	return nil
}

// token decodes a string token kept by the read (nil: the empty string).
// The bytes are valid until the next call.
func (d *decoder) token(tok []byte) []byte {
	if tok == nil {
		return nil
	}
	d.str.Reset(tok)
	return d.str.StrBytes() // the token was checked: it decodes
}

// text is token as a string.
func (d *decoder) text(tok []byte) string {
	return string(d.token(tok))
}

// finish appends the end-of-response events: the usage (the last seen),
// then the signatures as provider data.
func (d *decoder) finish() {
	if d.usage != nil {
		u := providers.LLMEvent{Kind: providers.LLMUsage}
		u.Usage.InputTokens, u.Usage.OutputTokens, u.Usage.CachedInputTokens = d.usage.prompt, d.usage.candidates, d.usage.cached
		d.events = append(d.events, u)
	}
	if len(d.sigs) > 0 {
		b, _ := json.Marshal(providerData{TextSignatures: d.sigs}) // strings always encode
		d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMProviderData, ProviderData: b})
	}
}

// The read. Each function reads one value into d.in with the scanner,
// which checks the whole chunk's grammar, the skipped members included,
// and stops every loop at the first error (Done reports it). A value of
// the wrong type is an error, as it was for encoding/json.

// readChunk reads the chunk: an object, or null (nothing).
func (d *decoder) readChunk() {
	sc, in := &d.sc, &d.in
	if !sc.Object() {
		return
	}
	for sc.More() {
		switch string(sc.Key()) {
		case "candidates":
			d.readCands()
		case "usageMetadata":
			if d.null() {
				in.hasUsage = false
				continue
			}
			if !sc.Object() {
				continue
			}
			if !in.hasUsage {
				in.usage, in.hasUsage = usage{}, true
			}
			for sc.More() {
				switch string(sc.Key()) {
				case "promptTokenCount":
					d.readInt(&in.usage.prompt)
				case "candidatesTokenCount":
					d.readInt(&in.usage.candidates)
				case "cachedContentTokenCount":
					d.readInt(&in.usage.cached)
				default:
					sc.Skip()
				}
			}
		case "error":
			if d.null() {
				in.hasErr = false
				continue
			}
			if !sc.Object() {
				continue
			}
			if !in.hasErr {
				in.errCode, in.errMsg, in.errStat, in.hasErr = 0, nil, nil, true
			}
			for sc.More() {
				switch string(sc.Key()) {
				case "code":
					d.readInt(&in.errCode)
				case "message":
					d.readStr(&in.errMsg)
				case "status":
					d.readStr(&in.errStat)
				default:
					sc.Skip()
				}
			}
		default:
			sc.Skip()
		}
	}
}

// readCands reads the candidates: the first into d.in.cand, the others
// into d.in.other, checked and dropped.
func (d *decoder) readCands() {
	sc, in := &d.sc, &d.in
	if d.null() {
		in.cand.reset()
		in.nCand = 0
		return
	}
	if !sc.Array() {
		return
	}
	n := 0
	for sc.More() {
		c := &in.cand
		if n > 0 {
			c = &in.other
			c.reset()
		}
		d.readCand(c)
		n++
	}
	if n == 0 {
		in.cand.reset()
	}
	in.nCand = n
}

// readCand reads a candidate into c (null leaves it as it is).
func (d *decoder) readCand(c *candIn) {
	sc := &d.sc
	if !sc.Object() {
		return
	}
	for sc.More() {
		switch string(sc.Key()) {
		case "content":
			if !sc.Object() {
				continue
			}
			for sc.More() {
				if string(sc.Key()) == "parts" {
					d.readParts(c)
				} else {
					sc.Skip()
				}
			}
		case "finishReason":
			d.readStr(&c.finish)
		default:
			sc.Skip()
		}
	}
}

// readParts reads a content's parts into c.parts, element by element into
// the slice as it is (see chunkIn).
func (d *decoder) readParts(c *candIn) {
	sc := &d.sc
	if d.null() {
		c.parts, c.nParts = c.parts[:0], 0
		return
	}
	if !sc.Array() {
		return
	}
	n := 0
	for sc.More() {
		if n == len(c.parts) {
			c.parts = append(c.parts, partIn{})
		}
		d.readPart(&c.parts[n])
		n++
	}
	if n == 0 {
		c.parts = c.parts[:0]
	}
	c.nParts = n
}

// readPart reads a part into p (null leaves it as it is).
func (d *decoder) readPart(p *partIn) {
	sc := &d.sc
	if !sc.Object() {
		return
	}
	for sc.More() {
		switch string(sc.Key()) {
		case "text":
			if d.null() {
				p.text, p.hasText = nil, false
			} else if d.readStr(&p.text) {
				p.hasText = true
			}
		case "thought":
			if !d.null() {
				p.thought = sc.Bool()
			}
		case "thoughtSignature":
			d.readStr(&p.sig)
		case "functionCall":
			if d.null() {
				p.hasCall = false
				continue
			}
			if !sc.Object() {
				continue
			}
			if !p.hasCall {
				p.callID, p.name, p.args, p.hasCall = nil, nil, nil, true
			}
			for sc.More() {
				switch string(sc.Key()) {
				case "id":
					d.readStr(&p.callID)
				case "name":
					d.readStr(&p.name)
				case "args":
					// Any value, as it is (a json.RawMessage); the
					// decode refuses one that is not an object.
					p.args = sc.Raw()
				default:
					sc.Skip()
				}
			}
		default:
			sc.Skip()
		}
	}
}

// null consumes a null if one is next and tells whether it did.
func (d *decoder) null() bool {
	return d.sc.Peek() == 'n' && d.sc.Null()
}

// readStr reads a string's token into *dst and tells whether it did; null
// leaves *dst as it is, anything else is an error.
func (d *decoder) readStr(dst *[]byte) bool {
	sc := &d.sc
	switch sc.Peek() {
	case '"':
		if tok := sc.Raw(); tok != nil {
			*dst = tok
			return true
		}
	case 'n':
		sc.Null()
	default:
		sc.StrBytes() // an error: not a string
	}
	return false
}

// readInt reads an integer into *dst; null leaves it as it is.
func (d *decoder) readInt(dst *int) {
	if !d.null() {
		if v := d.sc.Int(); d.sc.Err() == nil {
			*dst = v
		}
	}
}
