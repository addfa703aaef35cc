package engine

import "time"

// NewRunID names a run of an operation that is not a forget (kind
// "reconcile", "sweep") in its report and log event: the time and a
// random part, valid as a certificate request id.
func NewRunID(kind string, now time.Time) string {
	return kind + "-" + now.UTC().Format("20060102T150405Z") + "-" + randomHex(4)
}
