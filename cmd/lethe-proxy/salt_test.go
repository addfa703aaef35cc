package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The start-up error is logged: it must not quote any of the secret salt.
func TestLoadSalt_BadHexDoesNotQuoteTheSecret(t *testing.T) {
	t.Setenv(envSaltFile, "")
	t.Setenv(envSalt, strings.Repeat("ab", 31)+"qx")
	_, err := loadSalt()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "give 64 hex digits")
	assert.NotContains(t, err.Error(), "q")
	assert.NotContains(t, err.Error(), "U+0071")
}
