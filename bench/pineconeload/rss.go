package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/lethe-privacy/lethe/bench/internal/procstat"
)

// rssSeries is a process's VmRSS in KiB, sampled at a fixed step.
type rssSeries []int64

func (s rssSeries) String() string {
	if len(s) == 0 {
		return "not sampled"
	}
	return fmt.Sprintf("first %.1f MiB, peak %.1f MiB, last %.1f MiB (%d samples)",
		mib(s[0]), mib(slices.Max(s)), mib(s[len(s)-1]), len(s))
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

type rssSampler struct {
	stopc  chan struct{}
	done   chan rssSeries
	active bool
}

// startRSSSampler samples pid's VmRSS now and every step until stop; with
// pid 0 it samples nothing.
func startRSSSampler(pid int, step time.Duration) *rssSampler {
	s := &rssSampler{stopc: make(chan struct{}), done: make(chan rssSeries, 1), active: pid > 0}
	if !s.active {
		return s
	}
	go func() {
		var series rssSeries
		sample := func() {
			if rss, _, err := procstat.MemKB(pid); err == nil {
				series = append(series, rss)
			}
		}
		sample()
		t := time.NewTicker(step)
		defer t.Stop()
		for {
			select {
			case <-s.stopc:
				sample()
				s.done <- series
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return s
}

func (s *rssSampler) stop() rssSeries {
	if !s.active {
		return nil
	}
	close(s.stopc)
	return <-s.done
}
