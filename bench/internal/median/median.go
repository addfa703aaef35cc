// Package median is the middle value the bench programs report.
package median

import (
	"slices"
	"time"
)

// Of is the middle of v (the mean of the two middle values when v has
// an even length), 0 for an empty v; v is left as it was.
func Of[T float64 | time.Duration](v []T) T {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
