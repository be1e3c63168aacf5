//go:build cgo

package zmq

import (
	"fmt"
	"strings"
)

// z85Alphabet is ZeroMQ RFC 32's character set.
const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// checkedCert is what the line checker extracted from a certificate.
type checkedCert struct {
	Name, Public, Secret string
}

// checkCertificate applies the rules of Flux's certificate parser (see
// docs/flux-runtime.md, "The CURVE certificate") line by line, written here
// independently of pkg/curve's parser. It returns every violation found,
// each starting with a short rule tag so tests can tell which rule fired.
func checkCertificate(data []byte) (checkedCert, []string) {
	var c checkedCert
	var bad []string
	fail := func(line int, rule, format string, args ...any) {
		bad = append(bad, fmt.Sprintf("%s: line %d: %s", rule, line, fmt.Sprintf(format, args...)))
	}
	section := ""
	seen := map[string]bool{}
	values := map[string]map[string]string{}
	text := strings.TrimSuffix(string(data), "\n")
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		if len(line) >= 256 {
			fail(n, "line-length", "%d bytes, Flux reads lines shorter than 256", len(line))
		}
		body := strings.TrimLeft(line, " \t")
		indented := body != line
		switch {
		case strings.TrimSpace(body) == "" || strings.HasPrefix(body, "#"):
			continue
		case !indented:
			if body != "metadata" && body != "curve" {
				fail(n, "section", "unindented line %q is not a metadata or curve section", body)
				section = ""
				continue
			}
			if seen[body] {
				fail(n, "section", "duplicate section %s", body)
			}
			seen[body] = true
			section = body
			if values[section] == nil {
				values[section] = map[string]string{}
			}
		default:
			if section == "" {
				fail(n, "section", "indented line outside a metadata or curve section")
				continue
			}
			key, rest, ok := strings.Cut(body, "=")
			if !ok {
				fail(n, "entry", "indented line is not key = \"value\"")
				continue
			}
			key = strings.TrimRight(key, " \t")
			rest = strings.TrimSpace(rest)
			if key == "" {
				fail(n, "key", "empty key")
			}
			for _, r := range key {
				if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
					fail(n, "key", "key %q has %q (only alphanumerics, - and . are allowed)", key, r)
					break
				}
			}
			if len(rest) < 2 || rest[0] != '"' || rest[len(rest)-1] != '"' {
				fail(n, "quote", "value of %s is not double-quoted", key)
				continue
			}
			value := rest[1 : len(rest)-1]
			if i := strings.IndexAny(value, "_,\"'~|"); i >= 0 {
				fail(n, "value", "value of %s has forbidden character %q", key, value[i:i+1])
			}
			if _, dup := values[section][key]; dup {
				fail(n, "entry", "duplicate key %s in %s", key, section)
			}
			values[section][key] = value
		}
	}
	c.Name = values["metadata"]["name"]
	if _, ok := values["metadata"]["name"]; !ok {
		bad = append(bad, "name: the metadata section has no name entry")
	} else if c.Name == "" {
		bad = append(bad, "name: the metadata name is empty")
	}
	for _, k := range []struct {
		key string
		dst *string
	}{{"public-key", &c.Public}, {"secret-key", &c.Secret}} {
		v, ok := values["curve"][k.key]
		if !ok {
			bad = append(bad, fmt.Sprintf("curve-key: the curve section has no %s", k.key))
			continue
		}
		*k.dst = v
		if len(v) != 40 {
			bad = append(bad, fmt.Sprintf("curve-key: %s is %d characters, not 40", k.key, len(v)))
		}
		for _, r := range v {
			if !strings.ContainsRune(z85Alphabet, r) {
				bad = append(bad, fmt.Sprintf("curve-key: %s has %q, not a Z85 character", k.key, r))
				break
			}
		}
	}
	return c, bad
}
