package adminclient

import (
	"fmt"
	"net"
	"os"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/config"
)

// ResolveURL is the admin API's URL: adminURL (--admin) when given, else
// $LETHE_ADMIN_URL, else where the proxy configured by configPath
// (--config) serves it, forget.admin.listen (https when forget.admin.tls
// names a certificate), else DefaultURL.
func ResolveURL(adminURL, configPath string) (string, error) {
	switch {
	case adminURL != "":
		return adminURL, nil
	case os.Getenv(EnvURL) != "":
		return os.Getenv(EnvURL), nil
	case configPath == "":
		return DefaultURL, nil
	}
	// Offline: the tokens file and keys it names live on the proxy's host.
	cfg, err := config.LoadOffline(configPath)
	if err != nil {
		return "", fmt.Errorf("reading the admin API's address from --config: %w", err)
	}
	return listenURL(cfg.Forget.Admin), nil
}

// listenURL is the URL a client on the same host reaches the admin API of
// a at: a wildcard listen address (0.0.0.0, ::, none) is reached on
// loopback.
func listenURL(a config.Admin) string {
	scheme := "http"
	if a.TLS.CertFile != "" {
		scheme = "https"
	}
	addr := a.Listen
	if addr == "" {
		addr = admin.DefaultAddr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return scheme + "://" + addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}
