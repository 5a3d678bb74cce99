// Command task is the `go tool task` of the repository: it runs the task
// runner declared in tools/go.mod, the developer tools' own module file, as
// `go tool -modfile=<root>/tools/go.mod task <args>`, with the same standard
// input, output and error, the same signals and the same exit code, and
// nothing else.
//
// The engine's go.mod declares only this package as a tool (a package's tool
// name is the last element of its path), so it requires nothing of go-task
// or staticcheck: a program that imports the engine as a library inherits
// neither their modules nor their go.sum lines. Its test builds a consumer
// module against the checkout and holds its module graph to that.
//
// The root is the nearest directory above the working directory that holds
// a go.mod, the module root the go command itself uses, so `go tool task`
// works from any folder of the checkout. On Unix the process becomes the go
// command (exec), so signals and the exit status need no forwarding;
// elsewhere it runs it as a child and forwards them.
package main
