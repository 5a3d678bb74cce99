package admit

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// MachineTimes reads the machine's CPU time, every process's, in ticks
// since boot: busy (user, nice, system, irq, softirq, steal) and total
// (busy, idle and iowait). Its share over a period is how much of the
// machine the others leave the node.
type MachineTimes func() (busy, total uint64, err error)

// ProcStat is MachineTimes from /proc/stat's first line.
func ProcStat() (busy, total uint64, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrNoMachineTime, err)
	}
	return parseProcStat(data)
}

// parseProcStat reads the aggregate "cpu" line of /proc/stat: "cpu" then
// at least user, nice, system, idle, iowait, irq and softirq (steal from
// Linux 2.6.11; guest and guest_nice are already in user and nice).
func parseProcStat(data []byte) (busy, total uint64, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	if !sc.Scan() {
		return 0, 0, fmt.Errorf("%w: empty /proc/stat", ErrNoMachineTime)
	}
	fields := bytes.Fields(sc.Bytes())
	if len(fields) < 8 || string(fields[0]) != "cpu" {
		return 0, 0, fmt.Errorf("%w: /proc/stat's first line is not the cpu line", ErrNoMachineTime)
	}
	var v [8]uint64
	n := min(len(fields)-1, len(v))
	for i := range n {
		x, err := strconv.ParseUint(string(fields[i+1]), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%w: /proc/stat's cpu line holds a non-number", ErrNoMachineTime)
		}
		v[i] = x
	}
	user, nice, system, idle, iowait, irq, softirq, steal := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
	busy = user + nice + system + irq + softirq + steal
	total = busy + idle + iowait
	if busy < user || total < busy {
		return 0, 0, fmt.Errorf("%w: /proc/stat's counts overflow", ErrNoMachineTime)
	}
	return busy, total, nil
}
