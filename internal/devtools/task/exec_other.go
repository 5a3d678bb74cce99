//go:build !unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
)

// execGo runs the go command as a child where a process cannot be replaced:
// standard streams shared, every signal this process gets passed on (as the
// go command does for its tools), its exit code returned.
func execGo(goCmd string, argv, env []string) (int, error) {
	cmd := &exec.Cmd{Path: goCmd, Args: argv, Env: env, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if err := cmd.Start(); err != nil {
		return 1, fmt.Errorf("%w: start %s: %v", ErrNoGo, goCmd, err)
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sig := range sigs {
			_ = cmd.Process.Signal(sig)
		}
	}()
	err := cmd.Wait()
	signal.Stop(sigs)
	close(sigs)
	<-done
	if exit, ok := errors.AsType[*exec.ExitError](err); ok {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return 1, fmt.Errorf("%w: %s: %v", ErrNoGo, goCmd, err)
	}
	return 0, nil
}
