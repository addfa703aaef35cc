package pcstore

import (
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// failed wraps a go-pinecone error for logs. The status message is kept
// only for codes whose messages are about the connection or the caller
// (authentication, quota, availability): others may echo record ids or
// metadata from the request, which never go in an error.
func (ix *Index) failed(op, ns string, err error) error {
	where := fmt.Sprintf("pinecone: index %q", ix.name)
	if ns != "" {
		where += fmt.Sprintf(" namespace %q", ns)
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("%s: %s failed: %w", where, op, err)
	}
	switch st.Code() {
	case codes.Unauthenticated, codes.PermissionDenied:
		return fmt.Errorf("%s: %s refused (%s: %s): check the API key in the index's api_key_env variable", where, op, st.Code(), st.Message())
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Canceled:
		return fmt.Errorf("%s: %s failed (%s: %s); the request resumes later", where, op, st.Code(), st.Message())
	}
	return fmt.Errorf("%s: %s failed with gRPC status %s (message withheld: it may quote record data)", where, op, st.Code())
}
