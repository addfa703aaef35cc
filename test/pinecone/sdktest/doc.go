// Package sdktest holds what the tests that drive the real Pinecone SDKs
// share, whichever server they drive (the emulator, or the relay in front
// of it): a throwaway TLS certificate, go-pinecone index connections and
// values, and the Node SDK scripts of test/integration/node with the
// report they print when every call behaves as against Pinecone.
package sdktest
