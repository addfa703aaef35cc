package adminclient

import "flag"

// Flags are the client flags of every command that calls the admin API:
// --admin, --config and --token-file, as the commands' usage texts
// describe them under "Client flags".
type Flags struct {
	adminURL, configPath, tokenFile *string
}

// AddFlags defines --admin, --config and --token-file on fs; after
// fs.Parse, URL and Client read them.
func AddFlags(fs *flag.FlagSet) *Flags {
	return &Flags{
		adminURL:   fs.String("admin", "", "admin API URL (default env "+EnvURL+", else forget.admin of --config, else "+DefaultURL+")"),
		configPath: fs.String("config", "", "the proxy's configuration, to find its admin API when --admin and "+EnvURL+" are not set"),
		tokenFile:  fs.String("token-file", "", "file holding the admin API bearer token (default: env "+EnvToken+")"),
	}
}

// URL is the admin API's URL: --admin, else $LETHE_ADMIN_URL, else
// forget.admin of --config, else DefaultURL (ResolveURL).
func (f *Flags) URL() (string, error) {
	return ResolveURL(*f.adminURL, *f.configPath)
}

// Client is a client of the API at URL with the token of --token-file,
// else $LETHE_ADMIN_TOKEN.
func (f *Flags) Client() (*Client, error) {
	u, err := f.URL()
	if err != nil {
		return nil, err
	}
	return f.ClientAt(u)
}

// ClientAt is a client of the API at adminURL with the token of
// --token-file, else $LETHE_ADMIN_TOKEN.
func (f *Flags) ClientAt(adminURL string) (*Client, error) {
	return New(adminURL, *f.tokenFile)
}
