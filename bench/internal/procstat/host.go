package procstat

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// HostCPU returns busy and total jiffies from /proc/stat's "cpu" line.
func HostCPU() (busy, total int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i >= 8 { // guest, guest_nice are already in user/nice
			break
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total
}

// WaitQuiet waits until the host was at most pct % busy over one second, or
// max has passed. It returns how long it waited.
func WaitQuiet(pct float64, max time.Duration) time.Duration {
	if pct <= 0 {
		return 0
	}
	start := time.Now()
	for {
		b0, t0 := HostCPU()
		time.Sleep(time.Second)
		b1, t1 := HostCPU()
		if t1 > t0 && 100*float64(b1-b0)/float64(t1-t0) <= pct {
			return time.Since(start)
		}
		if time.Since(start) > max {
			return time.Since(start)
		}
	}
}
