package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cpuTicks returns utime+stime of process pid (all threads) in clock ticks.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no ')'", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is state (field 3); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: short", pid)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	return u + st, nil
}

// memKB returns VmRSS and VmHWM of pid in KiB.
func memKB(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var dst *int64
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			dst = &rss
		case strings.HasPrefix(line, "VmHWM:"):
			dst = &hwm
		default:
			continue
		}
		fs := strings.Fields(line)
		if len(fs) >= 2 {
			*dst, _ = strconv.ParseInt(fs[1], 10, 64)
		}
	}
	return rss, hwm, sc.Err()
}

// rssSampler records the largest VmRSS of pid seen every interval.
type rssSampler struct {
	mu   sync.Mutex
	max  int64
	stop chan struct{}
	done chan struct{}
}

func startRSSSampler(pid int, every time.Duration) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	sample := func() {
		if rss, _, err := memKB(pid); err == nil {
			s.mu.Lock()
			if rss > s.max {
				s.max = rss
			}
			s.mu.Unlock()
		}
	}
	sample()
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				sample()
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the largest VmRSS seen, in KiB.
func (s *rssSampler) Stop() int64 {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max
}

// hostCPU returns busy and total jiffies from /proc/stat's "cpu" line.
func hostCPU() (busy, total int64) {
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

// waitQuiet waits until the host was at most pct % busy over one second, or
// max has passed. It returns how long it waited.
func waitQuiet(pct float64, max time.Duration) time.Duration {
	if pct <= 0 {
		return 0
	}
	start := time.Now()
	for {
		b0, t0 := hostCPU()
		time.Sleep(time.Second)
		b1, t1 := hostCPU()
		if t1 > t0 && 100*float64(b1-b0)/float64(t1-t0) <= pct {
			return time.Since(start)
		}
		if time.Since(start) > max {
			return time.Since(start)
		}
	}
}
