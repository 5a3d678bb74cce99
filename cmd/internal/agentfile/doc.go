// Package agentfile reads agent files: one voice agent (prompt, greeting,
// providers and their options, VAD, turn policy, fillers, tools, the
// transports to open) written in TOML or YAML. It is the offline half of
// `brisvox check` and `brisvox serve --agent`: Parse turns a file into a
// typed File whose every value carries its line and column, and reports
// every problem it finds (not only the first) as a Diagnostic with a
// position and a hint that writes settings in the file's own syntax (TOML
// `hangover = "300ms"`, YAML `hangover: 300ms`; Format.Setting does it for
// the command's hints too). Building providers from a File is the
// command's job; its errors can be reported at the File's positions
// (File.Diag). The File also carries what `serve` needs beyond the call:
// who may use each endpoint (public, token and secret variable names,
// allowed origins, Twilio's auth token variable), the [serve] table
// (connection rate limits, capacity override, memory limit, GC target,
// admission mode and CPU ceiling), each stage's warm-up probe, the SIP
// trunks outbound calls go through and how the agent behaves on them
// ([outbound]). The prompt and greetings may hold {{name}} placeholders
// for a call's variables: checked here, filled by Expand (template.go).
//
// Both formats are first read into one small tree of positioned nodes
// (tree.go: TOML through go-toml's unstable parser, YAML through yaml.v3's
// nodes); one schema walker turns the tree into a File: decode.go walks
// the top level, values.go reads typed settings of a table, sections.go
// the engine's tables, provider.go a stage's provider and its options,
// hint.go and scalars.go write the hints and check the small values. A
// provider's options are not written here: schema.go lists the providers
// by stage, each with the option table its package publishes
// (providers.Options: names, types, bounds, enums, defaults, the key
// variable, the warm-up probes), and the walker checks a provider's table
// against it; docs/CONFIG.md's provider blocks are written from the same
// tables (TestDocs). Keys are never in a file: an option of type env names
// the environment variable that holds one, and no diagnostic ever shows a
// key's value.
package agentfile
