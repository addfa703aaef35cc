package forgetopen

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/config"
)

// A tokens file that cannot be read stops the start naming its key, and
// nothing is bound.
func TestListenAdmin_ATokensFileThatCannotBeReadNamesItsKey(t *testing.T) {
	cfg := &config.Config{}
	cfg.Forget.Admin.TokensFile = filepath.Join(t.TempDir(), "missing.json")
	cfg.Forget.Admin.Listen = "127.0.0.1:0"
	l, err := (&Forget{}).ListenAdmin(cfg, nil, nil, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "forget.admin.tokens_file: ") {
		t.Fatalf("listener %v, error %v; want the tokens file refused, naming forget.admin.tokens_file", l, err)
	}
}
