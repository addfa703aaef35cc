package demo

import (
	"context"
	"fmt"
	"strings"

	gopinecone "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

// memory is one sample record: who it is about and what it says.
type memory struct {
	ID, Person, Text string
	Values           []float32
}

// People are the demo's two sample subjects; Run forgets the first.
var People = []string{"alice", "bob"}

var memories = []memory{
	{"alice-1", "alice", "prefers vegetarian restaurants", []float32{0.9, 0.1, 0.2}},
	{"alice-2", "alice", "is training for a marathon in May", []float32{0.8, 0.3, 0.1}},
	{"bob-1", "bob", "asked about refunds for order 1042", []float32{0.1, 0.9, 0.3}},
	{"bob-2", "bob", "writes in German", []float32{0.2, 0.8, 0.4}},
}

// errForgotten is a sample person's write the proxy refused: forgotten
// in an earlier run.
type errForgotten struct{ person string }

func (e errForgotten) Error() string { return e.person + " is forgotten" }

// writeMemories upserts the sample memories of person through the
// proxy's Pinecone listener with go-pinecone, as an application would.
func writeMemories(ctx context.Context, proxyAddr, person string) error {
	pc, err := gopinecone.NewClient(gopinecone.NewClientParams{ApiKey: demoAPIKey})
	if err != nil {
		return err
	}
	idx, err := pc.Index(gopinecone.NewIndexConnParams{Host: "http://" + proxyAddr, Namespace: Namespace})
	if err != nil {
		return fmt.Errorf("connecting go-pinecone to the proxy at %s: %w", proxyAddr, err)
	}
	defer idx.Close()
	var vectors []*gopinecone.Vector
	for _, m := range memories {
		if m.Person != person {
			continue
		}
		md, err := structpb.NewStruct(map[string]any{"user_id": m.Person, "text": m.Text})
		if err != nil {
			return err
		}
		values := m.Values
		vectors = append(vectors, &gopinecone.Vector{Id: m.ID, Values: &values, Metadata: md})
	}
	if _, err := idx.UpsertVectors(ctx, vectors); err != nil {
		// LT003: the proxy refuses writes about a forgotten person.
		if st, ok := status.FromError(err); ok && st.Code() == codes.FailedPrecondition && strings.HasPrefix(st.Message(), "LT003") {
			return errForgotten{person}
		}
		return fmt.Errorf("writing the sample memories through the proxy: %w", err)
	}
	return nil
}
