package resourcelist

// A compacted item's metadata as Go values (issue 19, class 8). Once
// the text is spooled, what memory grows with is one stub per output
// item until the sorted list is written. A stub as a go-yaml tree (Stub)
// is a dozen nodes of 160 bytes each for a kpt-placed JobSet; a record
// holds the same metadata as strings, a few hundred bytes, and the list
// holds a shell in its place: an fn.KubeObject whose tree is poison, so
// that every getter and setter panics (TestShellPanics) and a reader
// that forgets the accessor (Compactor.Meta) fails loudly instead of
// reading "".

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Meta is what the function reads, and the one thing it writes, of an
// item's metadata once the item may be a stub: an fn.KubeObject has it,
// and so does a stub's record. Compactor.Meta gives the one to read.
type Meta interface {
	GetAPIVersion() string
	GetKind() string
	GetName() string
	GetNamespace() string
	GetAnnotations() map[string]string
	GetAnnotation(k string) string
	GetLabels() map[string]string
	GetLabel(k string) string
	IsLocalConfig() bool
	PathAnnotation() string
	IndexAnnotation() int
	IsEmpty() bool
	SetAnnotation(k, v string) error
}

// record is a stub's metadata and where its piece is. shell is what
// stands for the item in the list; the Compactor finds the record by the
// shell's address.
//
// Each field holds what the SDK's getter returned on the item's tree
// stub (Stub, filtered by the StubFilter), so a record answers as that
// stub did, quirks included: pairs[:labels] are GetLabels, the next
// annotations pairs GetAnnotations, and any pairs after them say where
// GetLabel or GetAnnotation of a key differs from the map's value (a
// value not tagged as a string, a key written twice), keyed by
// labelKey or annotationKey.
type record struct {
	shell fn.KubeObject

	apiVersion, kind, namespace, name string
	pairs                             []pair
	span
	labels, annotations uint32
}

// poison is every shell's object: a map whose one key and value are nil
// nodes. The SDK reads and writes a field by looking at each key of the
// map, so every getter and setter panics on it, and so does every walk
// of the tree (nodeOf, encoding, copying). A shell with no tree at all
// would not do: the SDK reads "" from it for some getters, and a setter
// gives it a tree of its own, silently. Nothing can write poison: a write
// panics before it changes anything.
var poison = newPoison()

// newPoison makes poison. The SDK reads a new object's group, version
// and kind: the map is poisoned once the object holds it.
func newPoison() *fn.KubeObject {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	obj := fn.MoveToKubeObject(yaml.NewRNode(n))
	n.Content = []*yaml.Node{nil, nil}
	return obj
}

// pair is one label or annotation.
type pair struct{ key, value string }

// The keys of the pairs after the maps: where a getter differs from the
// map, and that the stub was empty (IsEmpty: the item has no apiVersion,
// kind or metadata, so it has no labels or annotations either).
const (
	labelKey      = "\x00label:"
	annotationKey = "\x00annotation:"
	emptyKey      = "\x00empty"
)

// interner shares the strings a stub holds that repeat across items
// (apiVersion, kind, namespace, keys and short values), whose vocabulary
// does not grow with the list as names and paths do. Its caller holds
// the Compactor's lock (a Lazy gives each of its parsers its own).
type interner map[string]string

// of returns the shared copy of s.
func (in interner) of(s string) string {
	if t, ok := in[s]; ok {
		return t
	}
	in[s] = s
	return s
}

// shortValue is the longest label or annotation value shared: "true",
// "0", "jobset-flux" repeat; a name or a path does not.
const shortValue = 16

// newRecord is the record of obj's stub: Stub(obj, keep) read through
// the SDK's getters, whose tree is then dropped.
func newRecord(obj *fn.KubeObject, keep StubFilter, in interner) *record {
	return recordOf(Stub(obj, keep), in)
}

// recordOf is the record of a tree stub (Stub), read through the SDK's
// getters.
func recordOf(stub *fn.KubeObject, in interner) *record {
	r := &record{
		shell:      *poison,
		apiVersion: in.of(stub.GetAPIVersion()),
		kind:       in.of(stub.GetKind()),
		namespace:  in.of(stub.GetNamespace()),
		name:       stub.GetName(),
	}
	labels, annotations := stub.GetLabels(), stub.GetAnnotations()
	r.pairs = make([]pair, 0, len(labels)+len(annotations))
	r.pairs = appendPairs(r.pairs, labels, in)
	r.pairs = appendPairs(r.pairs, annotations, in)
	r.labels, r.annotations = uint32(len(labels)), uint32(len(annotations))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if v := stub.GetLabel(k); v != labels[k] {
			r.pairs = append(r.pairs, pair{labelKey + k, v})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		if v := stub.GetAnnotation(k); v != annotations[k] {
			r.pairs = append(r.pairs, pair{annotationKey + k, v})
		}
	}
	if stub.IsEmpty() {
		r.pairs = append(r.pairs, pair{key: emptyKey})
	}
	r.pairs = slices.Clip(r.pairs)
	return r
}

// appendPairs appends m in key order. A value equal to one before it
// shares its string (kpt writes each path twice, in both spellings).
func appendPairs(pairs []pair, m map[string]string, in interner) []pair {
	start := len(pairs)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if len(v) <= shortValue {
			v = in.of(v)
		} else if i := slices.IndexFunc(pairs[start:], func(p pair) bool { return p.value == v }); i >= 0 {
			v = pairs[start+i].value
		}
		pairs = append(pairs, pair{in.of(k), v})
	}
	return pairs
}

func (r *record) GetAPIVersion() string { return r.apiVersion }
func (r *record) GetKind() string       { return r.kind }
func (r *record) GetName() string       { return r.name }
func (r *record) GetNamespace() string  { return r.namespace }

// labelPairs and annotationPairs are the maps, as pairs; oddPairs the
// pairs after them (labelKey, annotationKey, emptyKey).
func (r *record) labelPairs() []pair { return r.pairs[:r.labels] }
func (r *record) annotationPairs() []pair {
	return r.pairs[r.labels : r.labels+r.annotations]
}
func (r *record) oddPairs() []pair { return r.pairs[r.labels+r.annotations:] }

// GetLabels is a new map on every call, as the SDK's.
func (r *record) GetLabels() map[string]string { return pairMap(r.labelPairs()) }

// GetAnnotations is a new map on every call, as the SDK's.
func (r *record) GetAnnotations() map[string]string { return pairMap(r.annotationPairs()) }

func (r *record) GetLabel(k string) string      { return r.get(r.labelPairs(), labelKey, k) }
func (r *record) GetAnnotation(k string) string { return r.get(r.annotationPairs(), annotationKey, k) }

// get is the value of key k in pairs, unless a pair after the maps says
// the getter reads another (odd is labelKey or annotationKey).
func (r *record) get(pairs []pair, odd, k string) string {
	for _, p := range r.oddPairs() {
		if strings.HasPrefix(p.key, odd) && p.key[len(odd):] == k {
			return p.value
		}
	}
	for _, p := range pairs {
		if p.key == k {
			return p.value
		}
	}
	return ""
}

// IsEmpty is the SDK's IsEmpty of the stub's tree: true when the item
// has none of the fields a stub keeps.
func (r *record) IsEmpty() bool {
	return slices.Contains(r.oddPairs(), pair{key: emptyKey})
}

// IsLocalConfig, PathAnnotation and IndexAnnotation are the SDK's, over
// GetAnnotation.
func (r *record) IsLocalConfig() bool {
	v := r.GetAnnotation(fn.KptLocalConfig)
	return v != "" && v != "false"
}

func (r *record) PathAnnotation() string { return r.GetAnnotation(kioutil.PathAnnotation) }

func (r *record) IndexAnnotation() int {
	v := r.GetAnnotation(kioutil.IndexAnnotation)
	if v == "" {
		return -1
	}
	i, _ := strconv.Atoi(v)
	return i
}

// SetAnnotation sets an annotation, as the SDK's does on a tree: the
// value is replaced or the key added, and the getters read v from then
// on. The item's piece is not changed: the caller encodes the item again
// (Compactor.Recompact), as pkg/transform's uniquePaths does.
func (r *record) SetAnnotation(k, v string) error {
	if k == fn.UpstreamIdentifier {
		return fn.ErrAttemptToTouchUpstreamIdentifier{}
	}
	odd := r.oddPairs()
	odd = slices.DeleteFunc(slices.Clone(odd), func(p pair) bool { return p.key == annotationKey+k || p.key == emptyKey })
	annotations := r.GetAnnotations()
	annotations[k] = v
	pairs := append(slices.Clone(r.labelPairs()), appendPairs(nil, annotations, interner{})...)
	r.pairs = append(pairs, odd...)
	r.annotations = uint32(len(annotations))
	return nil
}

// pairMap is pairs as a map.
func pairMap(pairs []pair) map[string]string {
	m := make(map[string]string, len(pairs))
	for _, p := range pairs {
		m[p.key] = p.value
	}
	return m
}
