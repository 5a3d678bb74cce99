package main

import "errors"

// ErrNoModule is returned when no directory from the working directory up
// holds a go.mod: `go tool task` runs inside the checkout only.
var ErrNoModule = errors.New("task: no go.mod in this directory or any parent")

// ErrNoToolsModule is returned when the module root has no tools/go.mod,
// the module file that declares the developer tools.
var ErrNoToolsModule = errors.New("task: no tools/go.mod at the module root")

// ErrNoGo is returned when no go command is on PATH (the go command puts
// its own first when it runs a tool).
var ErrNoGo = errors.New("task: no go command on PATH")
