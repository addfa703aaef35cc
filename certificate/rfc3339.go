package certificate

import (
	"fmt"
	"time"
)

// ParseTime reads a time as certificates and trusted keys files write
// them: the RFC 3339 subset of docs/certificate.md,
//
//	YYYY-MM-DDTHH:MM:SS[.F{1,9}](Z|+HH:MM|-HH:MM)
//
// with an upper-case T and Z, a date that exists, hours 00-23, minutes and
// seconds 00-59 (no leap second), at most nanosecond precision, and an
// offset below 24 hours. Every verifier reads the same instant from the
// same text: nothing is rounded, nothing rolls over into the next day.
func ParseTime(s string) (time.Time, error) {
	bad := func(why string) (time.Time, error) {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time (YYYY-MM-DDTHH:MM:SSZ): %s", s, why)
	}
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return bad("wrong shape")
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	sec, ok6 := digits(s[17:19])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return bad("wrong shape")
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return bad("no such date")
	}
	if hour > 23 || minute > 59 || sec > 59 {
		return bad("no such time of day")
	}
	rest, nanos := s[19:], 0
	if rest[0] == '.' {
		n := 1
		for n < len(rest) && '0' <= rest[n] && rest[n] <= '9' {
			n++
		}
		if n == 1 || n > 10 {
			return bad("the fraction of a second has 1 to 9 digits")
		}
		frac, _ := digits(rest[1:n])
		for i := n; i < 10; i++ {
			frac *= 10
		}
		rest, nanos = rest[n:], frac
	}
	offset := 0
	switch {
	case rest == "Z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := digits(rest[1:3])
		om, ok2 := digits(rest[4:6])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return bad("the offset is not ±HH:MM below 24 hours")
		}
		offset = (oh*60 + om) * 60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return bad("the zone is not Z or ±HH:MM")
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nanos, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), nil
}

// digits reads a run of ASCII digits.
func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, s != ""
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
