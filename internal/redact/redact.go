// Package redact blanks personal data out of text that is about to be
// logged. A subject reaches an error message in whatever spelling the
// code that wrote the message chose: as it is, quoted by Go (%q, with
// escapes), escaped inside JSON, or doubled quotes in an SQL literal.
// Blanking only the raw spelling would let the others through.
package redact

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Placeholder is what a blanked subject reads as.
const Placeholder = "[subject]"

// Subject returns msg with every spelling of subject replaced by
// Placeholder: raw or SQL-literal-escaped, then each of those escaped
// once or twice by Go quoting (strconv.Quote, QuoteToASCII) or JSON (an
// error quoting a JSON body that quotes the subject), without the outer
// quotes. An empty subject leaves msg as it is.
func Subject(msg, subject string) string {
	if subject == "" {
		return msg
	}
	for _, spelling := range spellings(subject) {
		msg = strings.ReplaceAll(msg, spelling, Placeholder)
	}
	return msg
}

// escapeDepth is how many escapings over one another Subject undoes.
const escapeDepth = 2

// spellings are subject's written forms, longest first, so that a form
// containing another is blanked whole.
func spellings(subject string) []string {
	forms := []string{subject, strings.ReplaceAll(subject, "'", "''")}
	level := forms
	for range escapeDepth {
		var next []string
		for _, f := range level {
			next = append(next, unquote(strconv.Quote(f)), unquote(strconv.QuoteToASCII(f)))
			if b, err := json.Marshal(f); err == nil {
				next = append(next, unquote(string(b)))
			}
		}
		forms = append(forms, next...)
		level = next
	}
	slices.SortFunc(forms, func(a, b string) int { // longest first; equal ones side by side for Compact
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(forms)
}

func unquote(quoted string) string { return quoted[1 : len(quoted)-1] }
