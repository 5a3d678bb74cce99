package sqlstore

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/records"
)

// row is a record as its table's columns hold it: the JSON of the record
// without the parts retention removes on their own schedule, and those
// parts in their own columns (nil: none, or removed).
type row struct {
	core                          []byte
	transcript, toolData, numbers []byte
	recording                     []byte
	transcriptRemoved             bool
	toolDataRemoved               bool
	recordingRemoved              bool
}

// toolData is one tool call's data, at the call's position in
// Record.Tools.
type toolData struct {
	Args   json.RawMessage `json:"args,omitempty"`
	Result string          `json:"result,omitempty"`
}

// numbers are the parties of a call.
type numbers struct {
	Caller records.Party `json:"caller,omitzero"`
	Callee records.Party `json:"callee,omitzero"`
}

// split takes r apart into its columns.
func split(r *records.Record) (row, error) {
	var out row
	var err error
	c := *r
	if r.Transcript != nil {
		if out.transcript, err = json.Marshal(r.Transcript); err != nil {
			return row{}, err
		}
	}
	out.transcriptRemoved = r.TranscriptRemoved
	c.Transcript, c.TranscriptRemoved = nil, false

	if r.Tools != nil {
		c.Tools = make([]records.ToolCall, len(r.Tools))
		data := make([]toolData, len(r.Tools))
		any := false
		for i, t := range r.Tools {
			data[i] = toolData{Args: t.Args, Result: t.Result}
			any = any || len(t.Args) > 0 || t.Result != ""
			t.Args, t.Result = nil, ""
			c.Tools[i] = t
		}
		if any {
			if out.toolData, err = json.Marshal(data); err != nil {
				return row{}, err
			}
		}
	}
	out.toolDataRemoved = r.ToolDataRemoved
	c.ToolDataRemoved = false

	if r.Caller != (records.Party{}) || r.Callee != (records.Party{}) {
		if out.numbers, err = json.Marshal(numbers{r.Caller, r.Callee}); err != nil {
			return row{}, err
		}
	}
	c.Caller, c.Callee = records.Party{}, records.Party{}

	if r.Recording != nil {
		rec := *r.Recording
		out.recordingRemoved = rec.Removed
		rec.Removed = false
		if out.recording, err = json.Marshal(&rec); err != nil {
			return row{}, err
		}
	}
	c.Recording = nil

	if out.core, err = json.Marshal(&c); err != nil {
		return row{}, err
	}
	return out, nil
}

// join puts a record together from its columns.
func join(in row) (*records.Record, error) {
	r := new(records.Record)
	if err := json.Unmarshal(in.core, r); err != nil {
		return nil, fmt.Errorf("the record: %w", err)
	}
	if in.transcript != nil {
		if err := json.Unmarshal(in.transcript, &r.Transcript); err != nil {
			return nil, fmt.Errorf("the transcript: %w", err)
		}
	}
	r.TranscriptRemoved = in.transcriptRemoved
	if in.toolData != nil {
		var data []toolData
		if err := json.Unmarshal(in.toolData, &data); err != nil {
			return nil, fmt.Errorf("the tool data: %w", err)
		}
		for i := range r.Tools {
			if i < len(data) {
				r.Tools[i].Args, r.Tools[i].Result = data[i].Args, data[i].Result
			}
		}
	}
	r.ToolDataRemoved = in.toolDataRemoved
	if in.numbers != nil {
		var n numbers
		if err := json.Unmarshal(in.numbers, &n); err != nil {
			return nil, fmt.Errorf("the numbers: %w", err)
		}
		r.Caller, r.Callee = n.Caller, n.Callee
	}
	if in.recording != nil {
		r.Recording = new(records.Recording)
		if err := json.Unmarshal(in.recording, r.Recording); err != nil {
			return nil, fmt.Errorf("the recording: %w", err)
		}
		r.Recording.Removed = in.recordingRemoved
	}
	return r, nil
}

// unixNano is t as the time columns hold it (0: the zero time).
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromUnixNano is the time a column holds, in UTC.
func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// nullBytes is b as a column value: NULL when nil. database/sql would
// send a nil []byte as NULL too, but a non-nil one as a blob: the JSON
// columns are text, so it goes as a string.
func nullBytes(b []byte) sql.NullString {
	return sql.NullString{String: string(b), Valid: b != nil}
}
