package pinecone

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Code is a gRPC status code; Pinecone's REST errors carry the same codes.
type Code int

// The codes the relay answers with itself.
const (
	CodeInvalidArgument    Code = 3
	CodeDeadlineExceeded   Code = 4
	CodeNotFound           Code = 5
	CodePermissionDenied   Code = 7
	CodeResourceExhausted  Code = 8
	CodeFailedPrecondition Code = 9
	CodeInternal           Code = 13
	CodeUnavailable        Code = 14
	CodeUnauthenticated    Code = 16
)

// httpStatus is the HTTP status a REST answer carries with each code; a
// code not listed is answered 500. RESOURCE_EXHAUSTED is the relay's own
// body limit, hence 413.
var httpStatus = map[Code]int{
	CodeInvalidArgument:    http.StatusBadRequest,
	CodeDeadlineExceeded:   http.StatusRequestTimeout,
	CodeNotFound:           http.StatusNotFound,
	CodePermissionDenied:   http.StatusForbidden,
	CodeResourceExhausted:  http.StatusRequestEntityTooLarge,
	CodeFailedPrecondition: http.StatusBadRequest,
	CodeInternal:           http.StatusInternalServerError,
	CodeUnavailable:        http.StatusServiceUnavailable,
	CodeUnauthenticated:    http.StatusUnauthorized,
}

// Status is an error answered to the client in Pinecone's shape: over REST
// {"code", "message", "details": []} with the code's HTTP status, over
// gRPC grpc-status and grpc-message.
type Status struct {
	Code    Code
	Message string
}

func (s *Status) Error() string { return fmt.Sprintf("code %d: %s", s.Code, s.Message) }

// writeStatus answers r with s in the request's protocol.
func writeStatus(w http.ResponseWriter, r *http.Request, s *Status) {
	if IsGRPC(r) {
		// A trailers-only response: gRPC carries errors in HTTP 200.
		h := w.Header()
		h.Set("Content-Type", "application/grpc")
		h.Set("Grpc-Status", strconv.Itoa(int(s.Code)))
		h.Set("Grpc-Message", percentEncode(s.Message))
		w.WriteHeader(http.StatusOK)
		return
	}
	code, ok := httpStatus[s.Code]
	if !ok {
		code = http.StatusInternalServerError
	}
	body, _ := json.Marshal(struct {
		Code    Code     `json:"code"`
		Message string   `json:"message"`
		Details []string `json:"details"`
	}{s.Code, s.Message, []string{}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	w.Write(body)
}

// percentEncode escapes a grpc-message value as the gRPC HTTP/2 spec
// requires: bytes outside printable ASCII, and '%', become %XX.
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// IsGRPC reports whether r is a gRPC call: HTTP/2 with an application/grpc
// content type (and its +format or ;parameter forms, not grpc-web).
func IsGRPC(r *http.Request) bool {
	if r.ProtoMajor != 2 {
		return false
	}
	rest, ok := strings.CutPrefix(r.Header.Get("Content-Type"), "application/grpc")
	return ok && (rest == "" || rest[0] == '+' || rest[0] == ';')
}
