package pgstore

import (
	"math"
	"strings"
)

// vectorDistance ranks a stored value against the query as an index's
// operator class does (smaller is nearer).
type vectorDistance func(query, stored []float32) float64

// indexDistance is how an operator class of pgvector compares values.
type indexDistance struct {
	elemSize  int  // bytes per stored element: 4 (vector) or 2 (halfvec)
	normalise bool // the index stores values L2-normalised (cosine)
	distance  vectorDistance
}

// distanceOf returns the comparison of a pgvector operator class; false
// for one whose values a walk cannot compare (sparsevec, bit).
func distanceOf(opclass string) (indexDistance, bool) {
	var out indexDistance
	switch {
	case strings.HasPrefix(opclass, "vector_"):
		out.elemSize = 4
	case strings.HasPrefix(opclass, "halfvec_"):
		out.elemSize = 2
	default:
		return out, false
	}
	switch {
	case strings.HasSuffix(opclass, "_l2_ops"):
		out.distance = squaredL2
	case strings.HasSuffix(opclass, "_cosine_ops"):
		out.distance, out.normalise = squaredL2, true // on unit vectors, as cosine ranks
	case strings.HasSuffix(opclass, "_ip_ops"):
		out.distance = negativeDot
	case strings.HasSuffix(opclass, "_l1_ops"):
		out.distance = taxicab
	default:
		return out, false
	}
	return out, true
}

func squaredL2(a, b []float32) float64 {
	var sum float64
	for i := range min(len(a), len(b)) {
		d := float64(a[i]) - float64(b[i])
		sum += d * d
	}
	return sum
}

func negativeDot(a, b []float32) float64 {
	var sum float64
	for i := range min(len(a), len(b)) {
		sum += float64(a[i]) * float64(b[i])
	}
	return -sum
}

func taxicab(a, b []float32) float64 {
	var sum float64
	for i := range min(len(a), len(b)) {
		sum += math.Abs(float64(a[i]) - float64(b[i]))
	}
	return sum
}
