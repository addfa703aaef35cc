package emulator

import (
	"fmt"
	"net/http"
)

// Code is a gRPC status code; Pinecone's REST errors carry the same numbers.
type Code int

// The gRPC status codes the emulator returns.
const (
	OK                Code = 0
	InvalidArgument   Code = 3
	NotFound          Code = 5
	ResourceExhausted Code = 8
	Unimplemented     Code = 12
	Internal          Code = 13
	Unauthenticated   Code = 16
)

// Error is a refused request: a gRPC status, or the REST body
// {"code": Code, "message": Message, "details": []}.
type Error struct {
	Code    Code
	Message string
	// HTTPStatus overrides the REST status derived from Code when not 0.
	HTTPStatus int
}

func (e *Error) Error() string {
	return fmt.Sprintf("pinecone emulator: code %d: %s", e.Code, e.Message)
}

func errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// httpStatus is the REST status for e, following the gRPC-to-HTTP mapping.
func (e *Error) httpStatus() int {
	if e.HTTPStatus != 0 {
		return e.HTTPStatus
	}
	switch e.Code {
	case InvalidArgument:
		return http.StatusBadRequest
	case NotFound:
		return http.StatusNotFound
	case ResourceExhausted:
		return http.StatusTooManyRequests
	case Unimplemented:
		return http.StatusNotImplemented
	case Unauthenticated:
		return http.StatusUnauthorized
	default:
		return http.StatusInternalServerError
	}
}

// tooLarge is the refusal of a body or message over the configured limit.
func tooLarge(limit int64) *Error {
	return &Error{
		Code:       ResourceExhausted,
		Message:    fmt.Sprintf("request is larger than the limit of %d bytes: send fewer or smaller vectors per request", limit),
		HTTPStatus: http.StatusRequestEntityTooLarge,
	}
}
