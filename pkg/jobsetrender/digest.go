package jobsetrender

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// digestPrefix names the hash and the canonical form behind a digest. A
// later change of either must change the prefix: an old digest then
// matches nothing, and its object is kept, never removed.
const digestPrefix = "sha256:"

// stampDigest records on a generated object the digest of the object as
// the function wrote it (plan.DigestAnnotation). Pruning removes an object
// only when its digest still matches: then the function wrote exactly
// this object and nothing has changed it since.
func stampDigest(obj *fn.KubeObject) {
	d, ok := digestOf(yamltree.NodeOf(obj))
	if !ok {
		// The function builds these objects itself, without aliases.
		panic("a generated object holds an alias")
	}
	if err := obj.SetAnnotation(plan.DigestAnnotation, d); err != nil {
		panic(fmt.Sprintf("setting the digest of a generated object: %v", err))
	}
}

// DigestMatches reports whether obj carries a digest and it is the digest
// of obj as it is now.
func DigestMatches(obj *fn.KubeObject) (recorded, matches bool) {
	want, recorded := obj.GetAnnotations()[plan.DigestAnnotation]
	if !recorded {
		return false, false
	}
	got, ok := digestOf(yamltree.NodeOf(obj))
	return true, ok && got == want
}

// digestOf hashes the canonical form of an object: every value it holds,
// map keys sorted, each scalar with the YAML tag it resolves to, so that
// quoting, block styles, indentation, key order and comments (which kpt
// and formatters may rewrite) do not count, and every change of a value,
// label, annotation or field does. The annotations that kpt and kustomize
// add to any object they pass (bookkeeping, below) and the digest itself
// are left out. It is false for an object holding an alias: the function
// never writes one, and expanding it could cost more than the input.
func digestOf(n *yaml.Node) (string, bool) {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if yamltree.HasAlias(n) {
		return "", false
	}
	h := sha256.New()
	w := bufio.NewWriter(h)
	canonical(w, n, atRoot)
	if err := w.Flush(); err != nil {
		panic(fmt.Sprintf("hashing cannot fail: %v", err))
	}
	return digestPrefix + hex.EncodeToString(h.Sum(nil)), true
}

// Where canonical is in an object: only the annotations are filtered.
const (
	atRoot = iota
	atMetadata
	atAnnotations
	elsewhere
)

// canonical writes n in a form that depends only on its values: a scalar
// is its tag and its text, each with its length in front; a list is its
// length and its items in order; a map is its length and its entries
// (key, then value) in the order of their encodings. Every part says
// where it ends, so no two different trees share an encoding, and no text
// is escaped or copied: a ConfigMap's scripts go to the hash as they are.
// An encoded key is never a prefix of another, so entries sort by their
// keys alone, and their values are compared only for a key written twice.
func canonical(w io.Writer, n *yaml.Node, where int) {
	switch n.Kind {
	case yaml.MappingNode:
		type entry struct {
			key  []byte
			k, v *yaml.Node
		}
		var entries []entry
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k, v := n.Content[i], n.Content[i+1]; !skipped(k, v, where) {
				var key bytes.Buffer
				canonical(&key, k, elsewhere)
				entries = append(entries, entry{key.Bytes(), k, v})
			}
		}
		slices.SortFunc(entries, func(a, b entry) int {
			if c := bytes.Compare(a.key, b.key); c != 0 {
				return c
			}
			var x, y bytes.Buffer
			canonical(&x, a.v, below(a.k, where))
			canonical(&y, b.v, below(b.k, where))
			return bytes.Compare(x.Bytes(), y.Bytes())
		})
		fmt.Fprintf(w, "{%d", len(entries))
		for _, e := range entries {
			_, _ = w.Write(e.key)
			canonical(w, e.v, below(e.k, where))
		}
		_, _ = io.WriteString(w, "}")
	case yaml.SequenceNode:
		fmt.Fprintf(w, "[%d", len(n.Content))
		for _, c := range n.Content {
			canonical(w, c, elsewhere)
		}
		_, _ = io.WriteString(w, "]")
	default:
		tag := n.ShortTag()
		fmt.Fprintf(w, "s%d:%s%d:", len(tag), tag, len(n.Value))
		_, _ = io.WriteString(w, n.Value)
	}
}

// skipped reports whether the digest leaves out the entry k: v of a map
// at where: an annotation it does not cover, or an annotations map with
// nothing it covers (kpt drops an annotations map it leaves empty).
func skipped(k, v *yaml.Node, where int) bool {
	switch {
	case k.Kind != yaml.ScalarNode:
		return false
	case where == atAnnotations:
		return !ownedAnnotation(k.Value)
	case where == atMetadata && k.Value == "annotations":
		return onlyBookkeeping(v)
	}
	return false
}

// below is where the value of key k of a map at where is.
func below(k *yaml.Node, where int) int {
	switch {
	case k.Kind != yaml.ScalarNode:
	case where == atRoot && k.Value == "metadata":
		return atMetadata
	case where == atMetadata && k.Value == "annotations":
		return atAnnotations
	}
	return elsewhere
}

// onlyBookkeeping reports whether an annotations map holds nothing the
// digest covers.
func onlyBookkeeping(annotations *yaml.Node) bool {
	if annotations.Kind != yaml.MappingNode {
		return yamltree.IsNull(annotations)
	}
	for i := 0; i+1 < len(annotations.Content); i += 2 {
		if k := annotations.Content[i]; k.Kind != yaml.ScalarNode || ownedAnnotation(k.Value) {
			return false
		}
	}
	return true
}

// ownedAnnotation reports whether the digest covers an annotation: every
// one but the digest itself and the bookkeeping kpt and kustomize add to
// every object they hand a function or fetch (seen with kpt 1.0.0-beta.61
// and kustomize 5.8.2), which says where the object lives, which run it
// is in or which upstream object it came from, not what it is:
// config.kubernetes.io/path and index (and their
// internal.config.kubernetes.io/ spellings), every other
// internal.config.kubernetes.io/ key (id, package-path, seqindent, ...),
// every internal.kpt.dev/ key (kpt pkg get adds upstream-identifier to
// every object it fetches; functions may not touch it),
// config.k8s.io/id and kustomize.config.k8s.io/id. Any other annotation
// counts, config.kubernetes.io/depends-on and the like included: a user
// or a tool set it, so the object is no longer exactly what the function
// wrote.
func ownedAnnotation(key string) bool {
	switch key {
	case plan.DigestAnnotation, LegacyPathAnnotation, LegacyIndexAnnotation, "config.k8s.io/id", "kustomize.config.k8s.io/id":
		return false
	}
	return !strings.HasPrefix(key, "internal.config.kubernetes.io/") && !strings.HasPrefix(key, fn.KptUseOnlyPrefix)
}
