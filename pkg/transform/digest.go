package transform

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
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
	d, ok := digestOf(nodeOf(obj))
	if !ok {
		// The function builds these objects itself, without aliases.
		panic("a generated object holds an alias")
	}
	if err := obj.SetAnnotation(plan.DigestAnnotation, d); err != nil {
		panic(fmt.Sprintf("setting the digest of a generated object: %v", err))
	}
}

// digestMatches reports whether obj carries a digest and it is the digest
// of obj as it is now.
func digestMatches(obj *fn.KubeObject) (recorded, matches bool) {
	want, recorded := obj.GetAnnotations()[plan.DigestAnnotation]
	if !recorded {
		return false, false
	}
	got, ok := digestOf(nodeOf(obj))
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
	var b strings.Builder
	canonical(&b, n, "")
	sum := sha256.Sum256([]byte(b.String()))
	return digestPrefix + hex.EncodeToString(sum[:]), true
}

// canonical writes n in a form that depends only on its values. path is
// the dotted path of n from the object's root, to find the annotations.
func canonical(b *strings.Builder, n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.MappingNode:
		entries := make([]string, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if path == "metadata.annotations" && k.Kind == yaml.ScalarNode && !ownedAnnotation(k.Value) {
				continue
			}
			if path == "metadata" && k.Kind == yaml.ScalarNode && k.Value == "annotations" && onlyBookkeeping(v) {
				continue // kpt drops an annotations map it leaves empty
			}
			var e strings.Builder
			canonical(&e, k, "")
			e.WriteByte(':')
			canonical(&e, v, strings.TrimPrefix(path+"."+k.Value, "."))
			entries = append(entries, e.String())
		}
		slices.Sort(entries)
		b.WriteString("{" + strings.Join(entries, ",") + "}")
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			canonical(b, c, "")
		}
		b.WriteByte(']')
	default:
		b.WriteString(strconv.Quote(n.ShortTag()) + strconv.Quote(n.Value))
	}
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
// every object they hand a function (seen with kpt 1.0.0-beta.61 and
// kustomize 5.8.2), which says where the object lives or which run it
// is in, not what it is: config.kubernetes.io/path and index (and their
// internal.config.kubernetes.io/ spellings), every other
// internal.config.kubernetes.io/ key (id, package-path, seqindent, ...),
// config.k8s.io/id and kustomize.config.k8s.io/id. Any other annotation
// counts, config.kubernetes.io/depends-on and the like included: a user
// or a tool set it, so the object is no longer exactly what the function
// wrote.
func ownedAnnotation(key string) bool {
	switch key {
	case plan.DigestAnnotation, legacyPathAnnotation, legacyIndexAnnotation, "config.k8s.io/id", "kustomize.config.k8s.io/id":
		return false
	}
	return !strings.HasPrefix(key, "internal.config.kubernetes.io/")
}
