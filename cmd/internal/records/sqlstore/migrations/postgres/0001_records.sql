-- The call records (records.Record). The indexed columns are what
-- records.Query filters and orders by; times are Unix nanoseconds (UTC).
-- record holds the record's JSON without the parts retention removes on
-- its own schedule, which have their own columns: transcript (JSON of
-- Record.Transcript), tool_data (JSON of each tool call's arguments and
-- result, by position), numbers (JSON of the caller and callee parties)
-- and recording (JSON of Record.Recording). A part removed is NULL and,
-- where the record says so, flagged.
CREATE TABLE records (
    call_id            TEXT    COLLATE "C" NOT NULL PRIMARY KEY,
    started            BIGINT  NOT NULL,
    ended              BIGINT  NOT NULL,
    node               TEXT    NOT NULL,
    transport          TEXT    NOT NULL,
    direction          TEXT    NOT NULL,
    agent              TEXT    NOT NULL,
    end_reason         TEXT    NOT NULL,
    caller_hash        TEXT    NOT NULL DEFAULT '',
    callee_hash        TEXT    NOT NULL DEFAULT '',
    turns              INTEGER NOT NULL,
    tools              INTEGER NOT NULL,
    record             TEXT    NOT NULL,
    transcript         TEXT,
    tool_data          TEXT,
    numbers            TEXT,
    recording          TEXT,
    transcript_removed BOOLEAN NOT NULL DEFAULT FALSE,
    tool_data_removed  BOOLEAN NOT NULL DEFAULT FALSE,
    recording_removed  BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX records_started     ON records (started, call_id);
CREATE INDEX records_ended       ON records (ended);
CREATE INDEX records_agent       ON records (agent, started);
CREATE INDEX records_end_reason  ON records (end_reason, started);
CREATE INDEX records_caller_hash ON records (caller_hash, started);
CREATE INDEX records_callee_hash ON records (callee_hash);
CREATE INDEX records_node        ON records (node, started);
CREATE INDEX records_transport   ON records (transport, started);

-- The erasure audit: who erased what (a call id or a caller's hash,
-- never a number), when, why and how many records went.
CREATE TABLE erasures (
    id           BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at           BIGINT  NOT NULL,
    requested_by TEXT    NOT NULL,
    reason       TEXT    NOT NULL,
    call_id      TEXT    NOT NULL DEFAULT '',
    caller_hash  TEXT    NOT NULL DEFAULT '',
    erased       INTEGER NOT NULL
);
CREATE INDEX erasures_call_id     ON erasures (call_id);
CREATE INDEX erasures_caller_hash ON erasures (caller_hash);
