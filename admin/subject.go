package admin

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxSubjectLen is the longest subject accepted, in bytes: far above any
// user id or e-mail address (at most 254), and small enough that a
// pasted document is refused rather than hashed.
const MaxSubjectLen = 4096

// CheckSubject says what is wrong with subject as a data subject, or nil.
// A subject is matched byte for byte against what the application stored:
// text that PostgreSQL cannot store (NUL), that is not UTF-8, or that holds
// control characters can only be a mistake, and would otherwise fail deep
// in a forget. The error never quotes the subject.
func CheckSubject(subject string) error {
	switch {
	case strings.TrimSpace(subject) == "":
		return errors.New(`the subject is empty; send {"subject": "<user id or email>"}`)
	case len(subject) > MaxSubjectLen:
		return fmt.Errorf("the subject is %d bytes long, over the limit of %d; send the user id or e-mail address the application stores", len(subject), MaxSubjectLen)
	case !utf8.ValidString(subject):
		return errors.New("the subject is not valid UTF-8; send it as the application stores it")
	}
	for i, r := range subject {
		switch {
		case r == 0:
			return fmt.Errorf("the subject holds a NUL character (U+0000) at byte %d, which PostgreSQL cannot store in text; remove it", i)
		case r == utf8.RuneError:
			return fmt.Errorf("the subject holds U+FFFD at byte %d, the replacement for invalid UTF-8 or an invalid \\u escape; send the subject as the application stores it", i)
		case unicode.IsControl(r):
			return fmt.Errorf("the subject holds a control character (U+%04X) at byte %d; remove it (a trailing newline, say)", r, i)
		}
	}
	return nil
}
