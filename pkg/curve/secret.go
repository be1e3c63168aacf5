package curve

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// SecretManifest returns a Kubernetes Secret manifest named name (in
// namespace, unless it is "") that holds cert under key, for users who
// keep keys in SOPS, sealed secrets or an external store. name and
// namespace must be valid names already: they are written as they are.
func SecretManifest(name, namespace, key string, cert []byte) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n", name)
	if namespace != "" {
		fmt.Fprintf(&b, "  namespace: %s\n", namespace)
	}
	fmt.Fprintf(&b, "type: Opaque\ndata:\n  %s: %s\n", key, base64.StdEncoding.EncodeToString(cert))
	return []byte(b.String())
}
