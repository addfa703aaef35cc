package certificate

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// checkJSONSubset enforces what docs/certificate.md ("JSON") adds to
// RFC 8259 on a document scanJSON accepted: the text is UTF-8, no string
// escapes half a surrogate pair, and no object names a member twice (after
// unescaping). JSON parsers differ on each of these (first or last member
// wins, replacement characters or lone surrogates), so a certificate that
// relies on one would read differently in another verifier; it is refused
// instead.
func checkJSONSubset(r *jsonReader) error {
	if !utf8.ValidString(r.text) {
		return errors.New("not UTF-8")
	}
	if d := nestingDepth(r.toks); d > maxSubsetDepth {
		return fmt.Errorf("values nest %d deep; at most %d is allowed", d, maxSubsetDepth)
	}
	for i, tok := range r.toks {
		switch {
		case tok.kind == jsonString && !tok.plain:
			if err := checkSurrogates(r.text[tok.start:tok.end]); err != nil {
				return fmt.Errorf("%s: %w", r.path(int32(i)), err)
			}
		case tok.kind == jsonObject:
			if name, ok := repeatedMember(r, int32(i)); ok {
				return fmt.Errorf("member %q appears twice", r.join(int32(i), name))
			}
		}
	}
	return nil
}

// maxSubsetDepth bounds how deep objects and arrays nest: certificates
// need 4 levels, and a small bound lets a verifier recurse without
// running out of stack.
const maxSubsetDepth = 64

// nestingDepth is the most containers any value of toks is inside of,
// counting the document itself.
func nestingDepth(toks []jsonToken) int {
	var ends []int32 // the next field of each open container
	depth := 0
	for i, tok := range toks {
		for len(ends) > 0 && ends[len(ends)-1] <= int32(i) {
			ends = ends[:len(ends)-1]
		}
		if tok.kind == jsonObject || tok.kind == jsonArray {
			ends = append(ends, tok.next)
			depth = max(depth, len(ends))
		}
	}
	return depth
}

// checkSurrogates refuses a \u escape of a UTF-16 surrogate that is not a
// high surrogate followed at once by an escaped low one. s is the text of a
// string scanJSON accepted, so every escape is complete.
func checkSurrogates(s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		i++
		if s[i] != 'u' {
			continue
		}
		u := hex4(s[i+1 : i+5])
		i += 4
		switch {
		case 0xDC00 <= u && u <= 0xDFFF:
			return fmt.Errorf(`\u%04x is a low surrogate without a high one`, u)
		case 0xD800 <= u && u <= 0xDBFF:
			if i+6 >= len(s) || s[i+1] != '\\' || s[i+2] != 'u' {
				return fmt.Errorf(`\u%04x is a high surrogate without a low one`, u)
			}
			if lo := hex4(s[i+3 : i+7]); lo < 0xDC00 || lo > 0xDFFF {
				return fmt.Errorf(`\u%04x is a high surrogate without a low one`, u)
			}
			i += 6
		}
	}
	return nil
}

func hex4(s string) uint64 {
	u, _ := strconv.ParseUint(s, 16, 16) // scanJSON checked the digits
	return u
}

// repeatedMember returns a member name object obj holds twice, if any.
func repeatedMember(r *jsonReader, obj int32) (string, bool) {
	var names []string
	var seen map[string]bool // for objects too large to compare pairwise
	for n := obj + 1; n < r.toks[obj].next; n = r.toks[n+1].next {
		name := r.stringAt(n)
		if seen != nil {
			if seen[name] {
				return name, true
			}
			seen[name] = true
			continue
		}
		for _, m := range names {
			if m == name {
				return name, true
			}
		}
		names = append(names, name)
		if len(names) > 16 {
			seen = make(map[string]bool, 2*len(names))
			for _, m := range names {
				seen[m] = true
			}
		}
	}
	return "", false
}
