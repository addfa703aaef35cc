package pcapture

import (
	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/proxy/pinecone"
)

// nonCanonicalCode is this adapter's own refusal of a request in a form it
// does not read: a "//" path, a write path spelled differently, or (strict
// mode) a path or API version it does not know (see the package doc); it
// is answered INVALID_ARGUMENT.
const nonCanonicalCode = "LT004"

// statusCodes maps capture's refusal codes to Pinecone's (see capture's
// package doc).
var statusCodes = map[string]pinecone.Code{
	capture.CodeUnattributed: pinecone.CodeInvalidArgument,
	capture.CodeForgotten:    pinecone.CodeFailedPrecondition,
	capture.CodeLedgerDown:   pinecone.CodeUnavailable,
	// A store held after a restore (capture.Hold) accepts writes again
	// once lethe-proxy replay ran: the write may be retried then.
	capture.CodeRestored: pinecone.CodeUnavailable,
	nonCanonicalCode:     pinecone.CodeInvalidArgument,
}

// refuse logs a refusal (its code and reason, never its message) and
// returns it in Pinecone's shape, the message starting with the code.
func (h *Hook) refuse(ix *pinecone.Index, w write, r *capture.Refusal) *pinecone.Status {
	h.log.Warn("pinecone write refused", "index", ix.Name, "op", w.name, "code", r.Code, "reason", r.LogReason)
	code, ok := statusCodes[r.Code]
	if !ok {
		code = pinecone.CodeInternal
	}
	msg := r.Code + " " + r.Message
	if r.Hint != "" {
		msg += " (" + r.Hint + ")"
	}
	return &pinecone.Status{Code: code, Message: msg}
}
