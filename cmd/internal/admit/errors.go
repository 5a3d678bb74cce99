package admit

import "errors"

// ErrInvalidConfig: a Config out of bounds (the error names the field).
var ErrInvalidConfig = errors.New("admit: invalid config")

// ErrNoCPUTime: the process's CPU time could not be read.
var ErrNoCPUTime = errors.New("admit: process CPU time unavailable")

// ErrNoMachineTime: the machine's CPU times could not be read.
var ErrNoMachineTime = errors.New("admit: machine CPU time unavailable")
