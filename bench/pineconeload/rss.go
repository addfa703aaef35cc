package main

import (
	"fmt"
	"slices"
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
