package procstat

import "time"

// RSSSampler samples a process's VmRSS in the background.
type RSSSampler struct {
	stop chan struct{}
	done chan []int64
}

// SampleRSS samples pid's VmRSS (KiB) now, every step, and once more at
// Stop; with pid ≤ 0 it samples nothing. Failed reads are skipped.
func SampleRSS(pid int, step time.Duration) *RSSSampler {
	s := &RSSSampler{stop: make(chan struct{}), done: make(chan []int64, 1)}
	if pid <= 0 {
		s.done <- nil
		return s
	}
	var series []int64
	sample := func() {
		if rss, _, err := MemKB(pid); err == nil {
			series = append(series, rss)
		}
	}
	sample()
	go func() {
		t := time.NewTicker(step)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
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

// Stop ends sampling and returns the samples, oldest first.
func (s *RSSSampler) Stop() []int64 {
	close(s.stop)
	return <-s.done
}
