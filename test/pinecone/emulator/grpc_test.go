package emulator

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIsGRPCContentType(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/grpc":               true,
		"application/grpc+proto":         true,
		"application/grpc; charset=utf8": true,
		"application/grpc-web":           false,
		"application/json":               false,
		"":                               false,
	} {
		assert.Equal(t, want, isGRPCContentType(ct), ct)
	}
}

func TestPercentEncode_EscapesWhatGRPCMessageCannotCarry(t *testing.T) {
	assert.Equal(t, "plain text: ok", percentEncode("plain text: ok"))
	assert.Equal(t, "100%25 caf%C3%A9%0Anext", percentEncode("100% café\nnext"))
}
