//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// execGo replaces this process with the go command: the same process id,
// so a signal sent to `go tool task` reaches the go command (which passes it
// on to the task runner) and its exit status is ours. It returns only if the
// exec failed.
func execGo(goCmd string, argv, env []string) (int, error) {
	err := syscall.Exec(goCmd, argv, env)
	return 1, fmt.Errorf("%w: exec %s: %v", ErrNoGo, goCmd, err)
}
