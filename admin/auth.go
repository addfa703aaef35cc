package admin

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// Role is what a token may do.
type Role string

const (
	// RoleOperator may call every route.
	RoleOperator Role = "operator"
	// RoleAuditor may read requests and certificates, verify certificates
	// and read the log, but not preview, forget or lift a tombstone.
	RoleAuditor Role = "auditor"
)

// Token is one entry of the tokens file. Only the token's SHA-256 is kept,
// so the file is no secret; the token itself is shown once, by
// `lethe-proxy admin-token`.
type Token struct {
	Name   string `json:"name"`   // who holds it; logged with each request
	Role   Role   `json:"role"`   // operator or auditor
	SHA256 string `json:"sha256"` // hex SHA-256 of the token's text
}

// tokenBytes is the entropy of a new token.
const tokenBytes = 32

// NewToken makes a random token (32 bytes, base64url) for name and role and
// returns it with its entry for the tokens file.
func NewToken(name string, role Role) (secret string, entry Token, err error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", Token{}, fmt.Errorf("admin: reading random bytes for a token: %w", err)
	}
	secret = base64.RawURLEncoding.EncodeToString(b)
	entry = Token{Name: name, Role: role, SHA256: HashToken(secret)}
	if err := checkTokens([]Token{entry}); err != nil {
		return "", Token{}, err
	}
	return secret, entry, nil
}

// HashToken returns the hex SHA-256 of a token, as the tokens file keeps it.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// LoadTokens reads a tokens file (see ParseTokens).
func LoadTokens(path string) ([]Token, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("admin: reading the tokens file: %w", err)
	}
	ts, err := ParseTokens(b)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return ts, nil
}

// ParseTokens reads a tokens file:
// {"tokens":[{"name":"ops-1","role":"operator","sha256":"<hex>"}]}.
func ParseTokens(data []byte) ([]Token, error) {
	tokens, err := decodeTokens(data)
	if err != nil {
		return nil, err
	}
	if err := checkTokens(tokens); err != nil {
		return nil, err
	}
	return tokens, nil
}

// tokensFileForm is the tokens file's JSON.
type tokensFileForm struct {
	Tokens []Token `json:"tokens"`
}

// decodeTokens reads a tokens file's entries without checking them.
func decodeTokens(data []byte) ([]Token, error) {
	var file tokensFileForm
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf(`admin: tokens file: %w; want {"tokens":[{"name":…,"role":"operator"|"auditor","sha256":…}]}`, err)
	}
	return file.Tokens, nil
}

// checkTokens rejects entries a server could not use unambiguously.
func checkTokens(ts []Token) error {
	if len(ts) == 0 {
		return fmt.Errorf("admin: no API tokens; create one with `lethe-proxy admin-token --name NAME --role operator --tokens-file FILE`")
	}
	names := map[string]bool{}
	hashes := map[string]bool{}
	for i, t := range ts {
		switch {
		case t.Name == "":
			return fmt.Errorf("admin: token %d has no name; name it after who holds it", i+1)
		case names[t.Name]:
			return fmt.Errorf("admin: token name %q is used twice; names must be unique (they appear in the access log)", t.Name)
		case t.Role != RoleOperator && t.Role != RoleAuditor:
			return fmt.Errorf("admin: token %q has role %q; want %q or %q", t.Name, t.Role, RoleOperator, RoleAuditor)
		}
		if b, err := hex.DecodeString(t.SHA256); err != nil || len(b) != sha256.Size {
			return fmt.Errorf("admin: token %q: sha256 must be 64 hex digits (the SHA-256 of the token, as `lethe-proxy admin-token` prints it)", t.Name)
		}
		h := strings.ToLower(t.SHA256)
		if hashes[h] {
			return fmt.Errorf("admin: token %q has the same sha256 as another entry; give each holder its own token", t.Name)
		}
		names[t.Name], hashes[h] = true, true
	}
	return nil
}

// credential is a configured token, decoded for comparison.
type credential struct {
	name string
	role Role
	hash [sha256.Size]byte
}

func credentials(ts []Token) ([]credential, error) {
	if err := checkTokens(ts); err != nil {
		return nil, err
	}
	out := make([]credential, len(ts))
	for i, t := range ts {
		out[i] = credential{name: t.Name, role: t.Role}
		hex.Decode(out[i].hash[:], []byte(t.SHA256)) // checked above
	}
	return out, nil
}

// lookup returns the credential the bearer token in r belongs to. Every
// entry is compared, in constant time, so that the time taken says nothing
// about which entry (if any) nearly matched.
func lookup(creds []credential, r *http.Request) (credential, bool) {
	scheme, secret, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || secret == "" {
		return credential{}, false
	}
	return lookupSecret(creds, strings.TrimSpace(secret))
}

// lookupSecret returns the credential of the token secret, comparing
// every entry in constant time.
func lookupSecret(creds []credential, secret string) (credential, bool) {
	sum := sha256.Sum256([]byte(secret))
	found := -1
	for i := range creds {
		if subtle.ConstantTimeCompare(sum[:], creds[i].hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return credential{}, false
	}
	return creds[found], true
}

// authorize lets requests through whose token has one of roles; it
// answers 401 to a missing or unknown token and 403 to another role.
func (s *server) authorize(roles ...Role) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, ok := lookup(s.tokens(), r)
			if !ok {
				w.Header().Set("WWW-Authenticate", "Bearer")
				writeError(w, http.StatusUnauthorized, "unauthorized",
					"missing or unknown bearer token; send Authorization: Bearer <token> (an operator creates one with `lethe-proxy admin-token`)")
				return
			}
			setTokenName(r.Context(), c.name)
			for _, role := range roles {
				if c.role == role {
					next.ServeHTTP(w, r)
					return
				}
			}
			writeError(w, http.StatusForbidden, "forbidden",
				fmt.Sprintf("token %q has role %s; this route needs role %s", c.name, c.role, joinRoles(roles)))
		})
	}
}

func joinRoles(roles []Role) string {
	s := make([]string, len(roles))
	for i, r := range roles {
		s[i] = string(r)
	}
	return strings.Join(s, " or ")
}

// setTokenName records who made the request for the access log, which
// runs outside the route and so cannot see what authorize found.
func setTokenName(ctx context.Context, name string) {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		info.token = name
	}
}
