package extract

import (
	"errors"
	"math"
	"strconv"
)

// Pinecone keeps a metadata number as a float64 whatever its spelling:
// {"user_id": 4242}, 4242.0 (Python's json.dumps of a float), 4.242e3 and
// 4242E0 are one number, as is the gRPC number_value 4242. A subject read
// from a number is that float64's one text, so that the ledger, its
// tombstones and forget's metadata filter agree on it however the writer
// spelled it.

// PineconeNumberSubject is the subject a Pinecone metadata number names:
// its shortest decimal text without exponent, as PostgreSQL's ->> writes
// an integer (4242, 0.5, 1000000000000000000000); -0 is 0, which
// Pinecone's filters find alike. ok is false for NaN and ±Inf, which are
// not JSON numbers and name nobody. It is the one canonical form the REST
// and gRPC extractors and forget's connector all use.
func PineconeNumberSubject(f float64) (subject string, ok bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", false
	}
	if f == 0 {
		f = 0 // -0 and 0 are one number to Pinecone's filters
	}
	return strconv.FormatFloat(f, 'f', -1, 64), true
}

// PineconeSubjectNumber is the number whose PineconeNumberSubject is
// subject, if there is one: forget filters on it besides the string.
func PineconeSubjectNumber(subject string) (float64, bool) {
	f, err := strconv.ParseFloat(subject, 64)
	if err != nil {
		return 0, false
	}
	s, ok := PineconeNumberSubject(f)
	return f, ok && s == subject
}

// errNumberRange refuses a JSON number beyond float64: Pinecone cannot
// store it as written, and no text of it names what it would keep.
var errNumberRange = errors.New("is a number too large for a float64 (it would be ±Inf); send a number Pinecone can store, or the id as a string")

// jsonNumberSubject is the subject the JSON number text names (valid JSON
// number syntax, checked before).
func jsonNumberSubject(text string) (string, error) {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil { // the syntax is JSON's, so only ErrRange: ±Inf
		return "", errNumberRange
	}
	s, _ := PineconeNumberSubject(f)
	return s, nil
}
