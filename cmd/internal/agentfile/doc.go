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
// (connection rate limits, capacity override, memory limit, GC target)
// and each stage's warm-up probe.
//
// Both formats are first read into one small tree of positioned nodes
// (tree.go: TOML through go-toml's unstable parser, YAML through yaml.v3's
// nodes); one schema walker (decode.go) turns the tree into a File. The
// provider option tables (schema.go) are data mirroring the provider
// Config fields that belong in a file: this package imports no provider.
// Keys are never in a file: an option of kind env names the environment
// variable that holds one, and no diagnostic ever shows a key's value.
package agentfile
