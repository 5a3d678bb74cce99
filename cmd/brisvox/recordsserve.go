package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/cmd/internal/records/journal"
	"github.com/brisvox/brisvox/cmd/internal/records/keeper"
	"github.com/brisvox/brisvox/cmd/internal/records/recording"
	"github.com/brisvox/brisvox/cmd/internal/records/redact"
	"github.com/brisvox/brisvox/cmd/internal/records/sqlstore"
	"github.com/brisvox/brisvox/cmd/internal/records/tracing"
	"github.com/brisvox/brisvox/cmd/internal/records/webhook"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/rs/zerolog"
)

// keptCalls is what `serve` keeps of its calls: the records service over
// its store and journals, the recorder, the tracer (each nil when off),
// joined into the server's Keeper and the operator API's records.
type keptCalls struct {
	dir      string
	store    records.Store
	backend  string
	recJ     *journal.Journal
	liveJ    *journal.Journal
	svc      *records.Service
	recorder *recording.Recorder
	tracer   *tracing.Tracer
	hooks    *webhook.Sender
	keeper   *keeper.Keeper
	log      zerolog.Logger
}

// recordsDir is the records directory of an agent file: [records] dir
// (relative to the file), else "<file without its extension>.records"
// beside it.
func recordsDir(f *agentfile.File) string {
	base := filepath.Dir(f.Path)
	if d := f.Records.Dir.V; d != "" {
		if filepath.IsAbs(d) {
			return d
		}
		return filepath.Join(base, d)
	}
	name := filepath.Base(f.Path)
	return filepath.Join(base, strings.TrimSuffix(name, filepath.Ext(name))+".records")
}

// numberKey is the numbers' hash key: the variable's value, else a key
// made once in dir (number.key, 0600) and read from there after.
func numberKey(dir, env string, lookup func(string) (string, bool)) ([]byte, error) {
	if v, ok := lookup(env); ok && v != "" {
		if len(v) < records.MinKeyBytes {
			return nil, fmt.Errorf("%s holds %d bytes; the numbers' hash key needs at least %d", env, len(v), records.MinKeyBytes)
		}
		return []byte(v), nil
	}
	path := filepath.Join(dir, "number.key")
	if b, err := os.ReadFile(path); err == nil {
		if len(b) < records.MinKeyBytes {
			return nil, fmt.Errorf("%s holds %d bytes; want at least %d (remove it to have a new key made, which changes every caller's hash)", path, len(b), records.MinKeyBytes)
		}
		return b, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("the numbers' hash key: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the numbers' hash key: %w", err)
	}
	if _, err := f.Write(key); err != nil {
		f.Close()
		return nil, fmt.Errorf("the numbers' hash key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("the numbers' hash key: %w", err)
	}
	return key, f.Close()
}

// openKept opens what the agent file's [records] and [tracing] ask for,
// and recovers the calls a crash left live. Nothing of it when records
// are off and tracing has no endpoint. On error, what was opened is
// closed.
func openKept(ctx context.Context, f *agentfile.File, node string, lookup func(string) (string, bool), log zerolog.Logger) (k *keptCalls, err error) {
	rc := f.Records
	k = &keptCalls{log: log}
	defer func() {
		if err != nil {
			k.close(context.Background())
			k = nil
		}
	}()
	if tr := f.Tracing; tr.Endpoint.V != "" {
		cfg := tracing.Config{Endpoint: tr.Endpoint.V, Node: node, Log: log}
		if name := tr.HeadersEnv.V; name != "" {
			h, err := tracing.ParseHeaders(os.Getenv(name))
			if err != nil {
				return nil, fmt.Errorf("[tracing] headers_env %s: %w", name, err)
			}
			cfg.Headers = h
		}
		if k.tracer, err = tracing.New(ctx, cfg); err != nil {
			return nil, fmt.Errorf("[tracing]: %w", err)
		}
	}
	if !rc.Enabled.V {
		if k.tracer == nil {
			return nil, nil
		}
		k.keeper = keeper.New(nil, nil, k.tracer, log)
		return k, nil
	}
	k.dir = recordsDir(f)
	if err := os.MkdirAll(k.dir, 0o700); err != nil {
		return nil, fmt.Errorf("[records] dir: %w", err)
	}
	dsn := "sqlite:" + filepath.Join(k.dir, "records.db")
	if name := rc.DatabaseEnv.V; name != "" {
		v, ok := lookup(name)
		if !ok || v == "" {
			return nil, fmt.Errorf("[records] database_env: %s is not set", name)
		}
		dsn = v
	}
	st, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("[records] store: %w", err)
	}
	k.store, k.backend = st, st.Backend()
	if k.recJ, err = journal.Open(journal.Config{Dir: filepath.Join(k.dir, "journal"), Log: log}); err != nil {
		return nil, fmt.Errorf("[records] journal: %w", err)
	}
	if k.liveJ, err = journal.Open(journal.Config{Dir: filepath.Join(k.dir, "live"), Log: log}); err != nil {
		return nil, fmt.Errorf("[records] live-call journal: %w", err)
	}
	kinds := make([]string, 0, len(rc.Redact))
	for _, v := range rc.Redact {
		kinds = append(kinds, v.V)
	}
	if len(kinds) == 0 {
		kinds = nil // every kind
	}
	rcfg := redact.Config{Kinds: kinds}
	for _, p := range rc.Patterns {
		rcfg.Patterns = append(rcfg.Patterns, redact.Pattern{Name: p.Name, Regexp: p.Regexp.V})
	}
	red, err := redact.New(rcfg)
	if err != nil {
		return nil, fmt.Errorf("[records] redact: %w", err)
	}
	cfg := records.Config{
		Node: node, Numbers: records.NumberPolicy(rc.Numbers.V), Transcripts: rc.Transcripts.V, ToolData: rc.ToolData.V,
		Redactor: red, Log: log,
		Retention: records.Retention{
			Records: days(rc.KeepDays.V), Transcripts: days(rc.TranscriptDays.V), Recordings: days(rc.RecordingDays.V),
			ToolData: days(rc.ToolDataDays.V), Numbers: days(rc.NumberDays.V),
		},
	}
	if cfg.Numbers != records.NumbersDrop {
		if cfg.NumberKey, err = numberKey(k.dir, rc.NumberKeyEnv.V, lookup); err != nil {
			return nil, fmt.Errorf("[records] numbers: %w", err)
		}
	}
	if rc.Recording.V != "off" {
		recCfg := recording.Config{Dir: filepath.Join(k.dir, "recordings"), Format: rc.Recording.V, Log: log}
		if b := rc.Bucket; b != nil {
			access, _ := lookup(b.AccessKeyEnv.V)
			secret, _ := lookup(b.SecretKeyEnv.V)
			recCfg.S3 = &recording.S3Config{Endpoint: b.Endpoint.V, Bucket: b.Name.V, Prefix: b.Prefix.V, Region: b.Region.V,
				AccessKey: access, SecretKey: secret, Secure: b.Secure.V}
		}
		k.recorder, err = recording.New(recCfg)
		if err != nil {
			return nil, fmt.Errorf("[records] recording: %w", err)
		}
		cfg.Recordings = k.recorder
		// The files a crash left half written are finished from what is
		// on disk before the service recovers the crash's calls.
		left, err := k.recorder.Recover()
		if err != nil {
			return nil, fmt.Errorf("[records] recording recovery: %w", err)
		}
		if len(left) > 0 {
			log.Warn().Int("recordings", len(left)).Msg("recordings: files left by a crash were finished")
		}
	}
	var sinks []records.Sink
	if len(rc.Webhooks) > 0 {
		secret, ok := lookup(rc.WebhookSecretEnv.V)
		if !ok || secret == "" {
			return nil, fmt.Errorf("[records] webhook_secret_env: %s is not set (the webhooks' signing secret)", rc.WebhookSecretEnv.V)
		}
		urls := make([]string, len(rc.Webhooks))
		for i, u := range rc.Webhooks {
			urls[i] = u.V
		}
		if k.hooks, err = webhook.New(webhook.Config{URLs: urls, Secret: []byte(secret), Dir: filepath.Join(k.dir, "webhooks"), Log: log}); err != nil {
			return nil, fmt.Errorf("[records] webhooks: %w", err)
		}
		sinks = append(sinks, k.hooks)
	}
	if k.svc, err = records.New(cfg, k.store, k.recJ, k.liveJ, sinks...); err != nil {
		return nil, fmt.Errorf("[records]: %w", err)
	}
	n, err := k.svc.Recover(ctx)
	if err != nil {
		return nil, fmt.Errorf("[records] recovery: %w", err)
	}
	if n > 0 {
		log.Warn().Int("calls", n).Msg("records: calls live when this node last stopped were recorded as node_crashed")
	}
	k.svc.Start()
	if k.hooks != nil {
		k.hooks.Start()
	}
	k.keeper = keeper.New(k.svc, k.recorder, k.tracer, log)
	return k, nil
}

func days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }

// wire gives the server the keeper and, with an operator API, the
// records' routes and metrics.
func (k *keptCalls) wire(cfg *serve.Config) {
	if k == nil {
		return
	}
	cfg.Keeper = k.keeper
	if k.svc != nil {
		parts := serve.RecordParts{Store: k.store, Service: k.svc}
		if k.recorder != nil {
			parts.Recorder = k.recorder
		}
		if k.hooks != nil {
			hooks := k.hooks
			parts.Webhooks = func() any {
				f := hooks.Failures()
				if f == nil {
					f = []webhook.Failure{}
				}
				return f
			}
		}
		cfg.Records = parts
	}
}

// metrics exports the records' counters on /metrics (every key of each
// part's Stats by event, the levels as gauges by kind) and /stats.
func (k *keptCalls) metrics(srv *serve.Server) error {
	if k == nil {
		return nil
	}
	type source struct {
		name  string
		stats func() map[string]uint64
	}
	var srcs []source
	if k.svc != nil {
		srcs = append(srcs, source{"records", k.svc.Stats}, source{"records_journal", k.recJ.Stats}, source{"records_live_journal", k.liveJ.Stats})
	}
	if k.recorder != nil {
		srcs = append(srcs, source{"recordings", k.recorder.Stats})
	}
	if k.tracer != nil {
		srcs = append(srcs, source{"tracing", k.tracer.Stats})
	}
	if k.hooks != nil {
		srcs = append(srcs, source{"webhooks", k.hooks.Stats})
	}
	for _, s := range srcs {
		srv.Attach(s.name, s.stats, nil)
		what := strings.ReplaceAll(s.name, "_", " ")
		for key := range s.stats() {
			read := func() float64 { return float64(s.stats()[key]) }
			if err := exportStat(srv, s.name, key, what, read); err != nil {
				return err
			}
		}
	}
	return nil
}

// exportStat registers one key of a part's Stats: a level as a gauge by
// kind (brisvox_records{kind="waiting"}), a count as a counter by event
// (brisvox_records_total{event="put_failures"}). The names are written
// out, so the docs' citations of them are checked (docstest).
func exportStat(srv *serve.Server, part, key, what string, read func() float64) error {
	gauge, counter := map[string]string{"kind": key}, map[string]string{"event": key}
	ghelp := "Levels of the call records' " + what + " (docs/RECORDS.md): what waits now, by kind."
	chelp := "Counters of the call records' " + what + " (docs/RECORDS.md), by event."
	level := isLevel(key)
	switch {
	case part == "records" && level:
		return srv.GaugeFunc("brisvox_records", ghelp, gauge, read)
	case part == "records":
		return srv.CounterFunc("brisvox_records_total", chelp, counter, read)
	case part == "records_journal" && level:
		return srv.GaugeFunc("brisvox_records_journal", ghelp, gauge, read)
	case part == "records_journal":
		return srv.CounterFunc("brisvox_records_journal_total", chelp, counter, read)
	case part == "records_live_journal" && level:
		return srv.GaugeFunc("brisvox_records_live_journal", ghelp, gauge, read)
	case part == "records_live_journal":
		return srv.CounterFunc("brisvox_records_live_journal_total", chelp, counter, read)
	case part == "recordings" && level:
		return srv.GaugeFunc("brisvox_recordings", ghelp, gauge, read)
	case part == "recordings":
		return srv.CounterFunc("brisvox_recordings_total", chelp, counter, read)
	case part == "tracing":
		return srv.CounterFunc("brisvox_tracing_total", chelp, counter, read)
	case part == "webhooks" && level:
		return srv.GaugeFunc("brisvox_webhooks", ghelp, gauge, read)
	case part == "webhooks":
		return srv.CounterFunc("brisvox_webhooks_total", chelp, counter, read)
	}
	return fmt.Errorf("no metric for %s's %s", part, key)
}

// isLevel tells the Stats keys that are levels, not counts.
func isLevel(key string) bool {
	switch key {
	case "waiting", "pending_puts", "pending", "segments", "calls_live", "pending_uploads":
		return true
	}
	return false
}

// close stops what was opened, in order: the records service drains its
// queue into the journal (the calls have ended), then the tracer
// flushes, then the journals, the recorder and the store close.
func (k *keptCalls) close(ctx context.Context) {
	if k == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if k.svc != nil {
		if err := k.svc.Close(ctx); err != nil {
			k.log.Error().Err(err).Msg("records: close")
		}
	}
	// The webhooks after the records service: its writer delivers while
	// it drains.
	if k.hooks != nil {
		if err := k.hooks.Close(ctx); err != nil {
			k.log.Error().Err(err).Msg("webhooks: close")
		}
	}
	if k.tracer != nil {
		if err := k.tracer.Close(ctx); err != nil {
			k.log.Error().Err(err).Msg("tracing: close")
		}
	}
	for _, j := range []*journal.Journal{k.recJ, k.liveJ} {
		if j != nil {
			if err := j.Close(); err != nil {
				k.log.Error().Err(err).Msg("records: journal close")
			}
		}
	}
	if k.recorder != nil {
		if err := k.recorder.Close(); err != nil {
			k.log.Error().Err(err).Msg("recordings: close")
		}
	}
	if k.store != nil {
		if err := k.store.Close(); err != nil {
			k.log.Error().Err(err).Msg("records: store close")
		}
	}
}
