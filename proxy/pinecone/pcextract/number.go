package pcextract

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Pinecone keeps a metadata number as a float64 whatever its spelling:
// {"user_id": 4242}, 4242.0 (Python's json.dumps of a float), 4.242e3 and
// 4242E0 are one number, as is the gRPC number_value 4242. A subject read
// from a number is that float64's one text, so that the ledger, its
// tombstones and forget's metadata filter agree on it however the writer
// spelled it.

// NumberSubject is the subject a Pinecone metadata number names:
// its shortest decimal text without exponent, as PostgreSQL's ->> writes
// an integer (4242, 0.5, 1000000000000000000000); -0 is 0, which
// Pinecone's filters find alike. ok is false for NaN and ±Inf, which are
// not JSON numbers and name nobody. It is the one canonical form the REST
// and gRPC extractors and forget's connector all use.
func NumberSubject(f float64) (subject string, ok bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", false
	}
	if f == 0 {
		f = 0 // -0 and 0 are one number to Pinecone's filters
	}
	return strconv.FormatFloat(f, 'f', -1, 64), true
}

// SubjectNumber is the number whose NumberSubject is
// subject, if there is one: forget filters on it besides the string.
func SubjectNumber(subject string) (float64, bool) {
	f, err := strconv.ParseFloat(subject, 64)
	if err != nil {
		return 0, false
	}
	s, ok := NumberSubject(f)
	return f, ok && s == subject
}

// errNumberRange refuses a JSON number beyond float64: Pinecone cannot
// store it as written, and no text of it names what it would keep.
var errNumberRange = errors.New("is a number too large for a float64 (it would be ±Inf); send a number Pinecone can store, or the id as a string")

// errNumberInexact refuses a JSON number a float64 cannot hold as written
// (12345678901234567890, 1.0000000000000001, 1e-400): Pinecone keeps
// another number, so the subject the writer meant and the one the store
// and the ledger would name differ, and a forget of the one would miss
// writes of the other.
var errNumberInexact = errors.New("is a number a float64 cannot hold as written (Pinecone would keep a nearby number instead); send the id as a string, or the number with at most the digits a float64 keeps")

// jsonNumberSubject is the subject the JSON number text names (valid JSON
// number syntax, checked before): NumberSubject of its float64,
// which must be the number written (4242.0 and 4.242e3 are 4242; every
// shortest text of a float64, as JavaScript and Python write them, is).
func jsonNumberSubject(text string) (string, error) {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil { // the syntax is JSON's, so only ErrRange: ±Inf
		return "", errNumberRange
	}
	s, _ := NumberSubject(f)
	if !sameDecimal(text, s) {
		return "", errNumberInexact
	}
	return s, nil
}

// sameDecimal reports whether the JSON number texts a and b are one
// decimal number (-0 and 0 are). It compares digits and exponents as
// text, so an exponent of any size costs nothing.
func sameDecimal(a, b string) bool {
	negA, digitsA, expA, okA := decimalParts(a)
	negB, digitsB, expB, okB := decimalParts(b)
	if !okA || !okB {
		return false
	}
	if digitsA == "" || digitsB == "" { // a zero
		return digitsA == digitsB
	}
	return negA == negB && digitsA == digitsB && expA == expB
}

// decimalParts writes the JSON number text as ±digits×10^exp with no
// leading or trailing zero in digits ("" for zero); ok is false when the
// exponent does not fit an int64.
func decimalParts(text string) (neg bool, digits string, exp int64, ok bool) {
	neg = strings.HasPrefix(text, "-")
	text = strings.TrimPrefix(text, "-")
	mantissa, expText, hasExp := strings.Cut(strings.ToLower(text), "e")
	whole, frac, _ := strings.Cut(mantissa, ".")
	digits = strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return neg, "", 0, true
	}
	if hasExp {
		e, err := strconv.ParseInt(strings.TrimPrefix(expText, "+"), 10, 64)
		if err != nil {
			return neg, digits, 0, false
		}
		exp = e
	}
	trimmed := strings.TrimRight(digits, "0")
	shift := int64(len(digits)-len(trimmed)) - int64(len(frac))
	if (shift > 0 && exp > math.MaxInt64-shift) || (shift < 0 && exp < math.MinInt64-shift) {
		return neg, trimmed, 0, false
	}
	return neg, trimmed, exp + shift, true
}
