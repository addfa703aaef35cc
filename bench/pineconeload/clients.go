package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// upserter sends one upsert, the body given (its protocol's encoding),
// and waits for its answer.
type upserter interface {
	protocol() string
	upsert(ctx context.Context, body []byte) error
	close()
}

// restUpserter posts the pre-encoded JSON body to /vectors/upsert over
// HTTP/1.1 with keep-alive, as the Node and Python SDKs do.
type restUpserter struct {
	client *http.Client
	url    string
}

func newRESTUpserter(base string, clients int) *restUpserter {
	return &restUpserter{
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}},
		url:    base + "/vectors/upsert",
	}
}

func (u *restUpserter) protocol() string { return "rest" }

func (u *restUpserter) upsert(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Api-Key", "bench")
	resp, err := u.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("REST upsert: HTTP status %d", resp.StatusCode)
	}
	return err
}

func (u *restUpserter) close() { u.client.CloseIdleConnections() }

// grpcUpserter calls /VectorService/Upsert with grpc-go, the gRPC stack
// go-pinecone uses, on one cleartext HTTP/2 connection shared by all
// clients as go-pinecone's index connection is; the message is sent as
// pre-encoded bytes (rawCodec) so the client does not re-encode the floats
// on every call.
type grpcUpserter struct {
	conn *grpc.ClientConn
}

func newGRPCUpserter(base string) (*grpcUpserter, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient("passthrough:///"+u.Host,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		return nil, err
	}
	return &grpcUpserter{conn: conn}, nil
}

func (u *grpcUpserter) protocol() string { return "grpc" }

func (u *grpcUpserter) upsert(ctx context.Context, msg []byte) error {
	ctx = metadata.AppendToOutgoingContext(ctx, "api-key", "bench")
	var reply []byte
	return u.conn.Invoke(ctx, "/VectorService/Upsert", msg, &reply)
}

func (u *grpcUpserter) close() { _ = u.conn.Close() }

// rawCodec sends a []byte message as it is and keeps the reply's bytes.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("rawCodec: cannot send %T", v)
	}
	return b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: cannot receive into %T", v)
	}
	*p = append((*p)[:0], data...)
	return nil
}
