package jobsetrender

import (
	"fmt"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// File modes of the mounted ConfigMap and Secret, written in decimal as
// the API stores them, with the octal in a comment for the reader.
const (
	scriptsMode = 0o555 // the scripts are executed directly
	// The Secret must be readable by whatever uid the broker runs as; the
	// entrypoint copies it to a private 0400 file before Flux reads it.
	certMode = 0o444
)

// volume is the pod volume name whose source is of kind source.
func volume(name, source string, spec *yaml.Node) *yaml.Node {
	return yamltree.Map(yamltree.KV("name", yamltree.String(name)), yamltree.KV(source, spec))
}

// mount is a volumeMount of volume name at path.
func mount(name, path string) *yaml.Node {
	return yamltree.Map(yamltree.KV("name", yamltree.String(name)), yamltree.KV("mountPath", yamltree.String(path)))
}

// readOnlyMount is a read-only volumeMount of volume name at path.
func readOnlyMount(name, path string) *yaml.Node {
	m := mount(name, path)
	yamltree.Set(m, "readOnly", yamltree.Bool(true), "")
	return m
}

func octal(mode int) *yaml.Node {
	n := yamltree.Int(mode)
	n.LineComment = fmt.Sprintf("%#o", mode)
	return n
}

// subPathMount is a read-only mount of subPath of volume name at path.
func subPathMount(name, path, subPath string) *yaml.Node {
	m := readOnlyMount(name, path)
	yamltree.Set(m, "subPath", yamltree.String(subPath), "")
	return m
}

// isModeComment reports whether a line comment is one that octal writes.
func isModeComment(c string) bool {
	c = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(c), "#"))
	return c == fmt.Sprintf("%#o", scriptsMode) || c == fmt.Sprintf("%#o", certMode)
}
