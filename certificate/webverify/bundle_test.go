package webverify

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite verify.html from page.html, page.mjs and certificate/node/*.mjs")

// The generator of verify.html. It inlines page.mjs and every module it
// imports, each in a function scope of its own (so that the modules'
// private names cannot collide) and in dependency order, into the one
// inline script of page.html, and adds a content security policy that
// allows that script and the style by their SHA-256 and nothing else.
//
// It reads the modules' import and export statements line by line, so it
// accepts only the forms the verifier's modules use, and refuses any other
// with the line: `import { a, b as c } from './x.mjs';`, `export { a }
// from './x.mjs';` and `export` before a function, class or const
// declaration of one name.

var (
	importLine   = regexp.MustCompile(`^import \{([^}]*)\} from '(\.\.?/[^']+\.mjs)';$`)
	reexportLine = regexp.MustCompile(`^export \{([^}]*)\} from '(\.\.?/[^']+\.mjs)';$`)
	exportDecl   = regexp.MustCompile(`^export ((?:async )?function\*? |class |const )([A-Za-z_$][\w$]*)`)
)

const (
	scriptTag = `<script type="module" src="page.mjs"></script>`
	charset   = `<meta charset="utf-8">`
)

// bundler collects modules by path, each once, dependencies first.
type bundler struct {
	order []string          // module paths, dependencies before their importers
	vars  map[string]string // module path → the name of its exports object
	state map[string]int    // 1 visiting, 2 done
	out   strings.Builder
}

// moduleVar names the object holding a module's exports after its path.
func moduleVar(path string) string {
	base := filepath.Base(filepath.Dir(path)) + "_" + strings.TrimSuffix(filepath.Base(path), ".mjs")
	return "module_" + regexp.MustCompile(`[^A-Za-z0-9_]`).ReplaceAllString(base, "_")
}

// names reads an import or export list: "a, b as c" → destructuring
// "a, b: c" and the local names a, c.
func names(list string) (pattern string, locals []string, err error) {
	var parts []string
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		from, to, renamed := strings.Cut(item, " as ")
		if !renamed {
			to = from
		}
		if !regexp.MustCompile(`^[A-Za-z_$][\w$]*$`).MatchString(from) || !regexp.MustCompile(`^[A-Za-z_$][\w$]*$`).MatchString(to) {
			return "", nil, fmt.Errorf("%q is no name", item)
		}
		if renamed {
			parts = append(parts, from+": "+to)
		} else {
			parts = append(parts, from)
		}
		locals = append(locals, to)
	}
	return strings.Join(parts, ", "), locals, nil
}

// add bundles the module at path and what it imports; entry is the page's
// own module, which exports nothing.
func (b *bundler) add(path string, entry bool) error {
	switch b.state[path] {
	case 1:
		return fmt.Errorf("%s: imported in a cycle", path)
	case 2:
		return nil
	}
	b.state[path] = 1
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var body strings.Builder
	var exports []string
	for i, line := range strings.Split(string(src), "\n") {
		where := fmt.Sprintf("%s:%d", path, i+1)
		if strings.Contains(line, "import.meta") || strings.Contains(line, "import(") || strings.Contains(line, "node:") {
			return fmt.Errorf("%s: %q runs only where modules load; the page inlines its modules", where, line)
		}
		if m := importLine.FindStringSubmatch(line); m != nil {
			dep := filepath.Join(filepath.Dir(path), m[2])
			if err := b.add(dep, false); err != nil {
				return err
			}
			pattern, _, err := names(m[1])
			if err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			fmt.Fprintf(&body, "const { %s } = %s;\n", pattern, b.vars[dep])
			continue
		}
		if m := reexportLine.FindStringSubmatch(line); m != nil {
			dep := filepath.Join(filepath.Dir(path), m[2])
			if err := b.add(dep, false); err != nil {
				return err
			}
			pattern, locals, err := names(m[1])
			if err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			fmt.Fprintf(&body, "const { %s } = %s;\n", pattern, b.vars[dep])
			exports = append(exports, locals...)
			continue
		}
		if m := exportDecl.FindStringSubmatch(line); m != nil {
			exports = append(exports, m[2])
			body.WriteString(strings.TrimPrefix(line, "export ") + "\n")
			continue
		}
		if strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "export ") {
			return fmt.Errorf("%s: %q is an import or export form the page's generator does not read; use one of those in bundle_test.go", where, line)
		}
		body.WriteString(line + "\n")
	}
	b.vars[path] = moduleVar(path)
	rel := filepath.ToSlash(filepath.Join("certificate", "webverify", path))
	if entry {
		fmt.Fprintf(&b.out, "// %s\n{\n%s}\n", rel, body.String())
	} else {
		fmt.Fprintf(&b.out, "// %s\nconst %s = (() => {\n%sreturn { %s };\n})();\n", rel, b.vars[path], body.String(), strings.Join(exports, ", "))
	}
	b.order = append(b.order, path)
	b.state[path] = 2
	return nil
}

// between returns the text of s between open and close.
func between(s, open, close string) (string, error) {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return "", fmt.Errorf("no %s", open)
	}
	text, _, ok := strings.Cut(rest, close)
	if !ok {
		return "", fmt.Errorf("no %s after %s", close, open)
	}
	return text, nil
}

// cspHash is a CSP source matching an inline element's exact text.
func cspHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// generatePage builds verify.html.
func generatePage() ([]byte, error) {
	tmpl, err := os.ReadFile("page.html")
	if err != nil {
		return nil, err
	}
	page := string(tmpl)
	b := &bundler{vars: map[string]string{}, state: map[string]int{}}
	if err := b.add("page.mjs", true); err != nil {
		return nil, err
	}
	script := "\n" + b.out.String()
	if strings.Contains(strings.ToLower(script), "</script") || strings.Contains(script, "<!--") {
		return nil, fmt.Errorf("the modules contain </script or <!--, which would end the inline script early")
	}
	style, err := between(page, "<style>", "</style>")
	if err != nil {
		return nil, fmt.Errorf("page.html: %w", err)
	}
	if strings.Count(page, scriptTag) != 1 || strings.Count(page, charset) != 1 {
		return nil, fmt.Errorf("page.html: want exactly one %s and one %s", scriptTag, charset)
	}
	csp := fmt.Sprintf("default-src 'none'; script-src %s; style-src %s; base-uri 'none'; form-action 'none'", cspHash(script), cspHash(style))
	head := charset + "\n" +
		"<!-- Generated from certificate/webverify/page.html, page.mjs and certificate/node/*.mjs by\n" +
		"     go generate ./certificate/webverify; do not edit. -->\n" +
		`<meta http-equiv="Content-Security-Policy" content="` + csp + `">`
	page = strings.Replace(page, charset, head, 1)
	page = strings.Replace(page, scriptTag, `<script type="module">`+script+`</script>`, 1)
	return []byte(page), nil
}

// TestPage_IsCurrent keeps verify.html (embedded as Page, served at
// /verify) equal to what page.html, page.mjs and the verifier's modules
// generate; `go generate ./certificate/webverify` rewrites it.
func TestPage_IsCurrent(t *testing.T) {
	want, err := generatePage()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("verify.html", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile("verify.html")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatal("verify.html is missing or stale: run go generate ./certificate/webverify")
	}
	if !bytes.Equal(Page, want) {
		t.Fatal("the embedded Page is not verify.html")
	}
}

// TestPage_PolicyAllowsOnlyItsOwnScriptAndStyle: the header Serve sends
// and the page's meta element carry the policy of the generated page,
// which names its script and style by hash and allows no request.
func TestPage_PolicyAllowsOnlyItsOwnScriptAndStyle(t *testing.T) {
	page := string(Page)
	script, err := between(page, `<script type="module">`, "</script>")
	if err != nil {
		t.Fatal(err)
	}
	style, err := between(page, "<style>", "</style>")
	if err != nil {
		t.Fatal(err)
	}
	meta := metaPolicy(page)
	for _, want := range []string{"default-src 'none'", "script-src " + cspHash(script) + ";", "style-src " + cspHash(style) + ";"} {
		if !strings.Contains(meta, want) {
			t.Errorf("the page's policy %q lacks %q", meta, want)
		}
	}
	if policy != meta+"; frame-ancestors 'none'" {
		t.Errorf("Serve's policy %q is not the page's", policy)
	}
}
