// Package docstest keeps the docs true to the code. It reads the names the
// docs cite in backquotes (docs/*.md, docs/providers/*.md, README.md) and
// the names the code has (its Go files, read with go/ast, and the agent
// file's keys as cmd/internal/agentfile reports them), and Check lists
// every citation the code does not keep and every metric, agent-file key
// or serve flag the docs do not name. It takes no part in a call: its test
// runs in `go tool task test` and fails with the list.
//
// What is recognised, by the form of a backquoted span:
//
//   - a metric: brisvox_... (a trailing * is a prefix, {a,b} its labels);
//   - a flag: --name (also inside a longer span such as `serve --drain`);
//   - an agent-file table: [table] or [table.sub];
//   - an agent-file key: `key = value`, `key: value`, `table.key`;
//   - a counter: a snake_case name (or prefix_*) right after "counted",
//     "counts", "counter", "counters" (a list of spans goes on to the
//     end of the clause), or right before "counter(s)";
//   - a path under one of the module's top-level directories
//     (sim/alloc_test.go, media/carrier/..., actors/vad.Scorer): it is
//     in the tree;
//   - a test, benchmark or fuzz target (TestX, BenchmarkX/sub, TestX*):
//     some package declares it;
//   - a Go name of a package of the module: pkg.Name (pkg.Type.Field),
//     declared by a package of that name (another module's package,
//     prometheus or testing, is not checked);
//   - any other snake_case name: a name the code knows (a string literal,
//     a constant, an identifier or a struct tag of any Go file, tests
//     included), so a renamed or deleted name shows.
//
// Fenced code blocks are not read: the agent-file examples in them are
// parsed by agentfile's own TestDocs.
package docstest
