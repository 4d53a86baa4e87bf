package main

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// machine is what start-up sizes settings against: the CPUs this process may run on and the
// memory it may use.
type machine struct {
	CPUs        int
	MemoryBytes int64 // 0 when unknown: no memory bound is checked
}

// thisMachine reads the CPUs as Go's scheduler does (the affinity mask, so taskset and CPU
// sets count, and a container's CPU quota) and the memory from the cgroup's limit when one is
// set, else from /proc/meminfo.
func thisMachine() machine {
	m := machine{CPUs: runtime.GOMAXPROCS(0)}
	if data, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if v, err := strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64); err == nil && v > 0 {
			m.MemoryBytes = v
		}
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		defer f.Close()
		lines := bufio.NewScanner(f)
		for lines.Scan() {
			if rest, ok := strings.CutPrefix(lines.Text(), "MemTotal:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				if err == nil && (m.MemoryBytes == 0 || kb<<10 < m.MemoryBytes) {
					m.MemoryBytes = kb << 10
				}
				break
			}
		}
	}
	return m
}
