package resourcelist

// An item's metadata as Go values. While the items are text (the input
// read lazily, the output spooled), what memory grows with is one record
// per item: a record holds the metadata the function reads as strings,
// where the same metadata as a go-yaml tree is a dozen nodes for a
// kpt-placed JobSet (docs/contributing/performance.md, "Memory").

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
)

// Meta is an item's metadata as plain values: what indexing, orphan
// pruning, kpt placement, sorting and results read of an item. Its
// labels and annotations are those its MetaReader's filter keeps.
//
// Each value is what the SDK's getter returns on the item's tree stub
// (treeStub, filtered), so a Meta answers as the item does, quirks
// included: pairs[:labels] are Labels, the next annotations pairs
// Annotations, and any pairs after them say where Label or Annotation
// of a key differs from the map's value (a value not tagged as a string,
// a key written twice), keyed by labelKey or annotationKey.
type Meta struct {
	APIVersion, Kind, Namespace, Name string

	pairs               []pair
	labels, annotations uint32
}

// MetaFilter says which labels and annotations (field is "labels" or
// "annotations") a Meta keeps; nil keeps them all.
type MetaFilter func(field, key string) bool

// MetaReader makes Metas, sharing the strings that repeat across them.
// It is not safe for concurrent use.
type MetaReader struct {
	keep    MetaFilter
	strings interner
}

// NewMetaReader returns a MetaReader whose Metas keep the labels and
// annotations keep allows.
func NewMetaReader(keep MetaFilter) *MetaReader {
	return &MetaReader{keep: keep, strings: interner{}}
}

// Read is obj's Meta.
func (rc *MetaReader) Read(obj *fn.KubeObject) *Meta {
	return recordOf(treeStub(obj, rc.keep), rc.strings)
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
// does not grow with the list as names and paths do. A MetaReader has
// one; a Lazy gives each of its parsers its own.
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

// recordOf is the record of a tree stub (treeStub), read through the SDK's
// getters.
func recordOf(stub *fn.KubeObject, in interner) *Meta {
	r := &Meta{
		APIVersion: in.of(stub.GetAPIVersion()),
		Kind:       in.of(stub.GetKind()),
		Namespace:  in.of(stub.GetNamespace()),
		Name:       stub.GetName(),
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

// labelPairs and annotationPairs are the maps, as pairs; oddPairs the
// pairs after them (labelKey, annotationKey, emptyKey).
func (r *Meta) labelPairs() []pair { return r.pairs[:r.labels] }
func (r *Meta) annotationPairs() []pair {
	return r.pairs[r.labels : r.labels+r.annotations]
}
func (r *Meta) oddPairs() []pair { return r.pairs[r.labels+r.annotations:] }

// Labels is a new map on every call, as the SDK's GetLabels.
func (r *Meta) Labels() map[string]string { return pairMap(r.labelPairs()) }

// Annotations is a new map on every call, as the SDK's GetAnnotations.
func (r *Meta) Annotations() map[string]string { return pairMap(r.annotationPairs()) }

// Label and Annotation are the SDK's GetLabel and GetAnnotation.
func (r *Meta) Label(k string) string      { return r.get(r.labelPairs(), labelKey, k) }
func (r *Meta) Annotation(k string) string { return r.get(r.annotationPairs(), annotationKey, k) }

// get is the value of key k in pairs, unless a pair after the maps says
// the getter reads another (odd is labelKey or annotationKey).
func (r *Meta) get(pairs []pair, odd, k string) string {
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

// Empty is the SDK's IsEmpty of the stub's tree: true when the item
// has none of the fields a stub keeps.
func (r *Meta) Empty() bool {
	return slices.Contains(r.oddPairs(), pair{key: emptyKey})
}

// LocalConfig, Path and Index are the SDK's IsLocalConfig,
// PathAnnotation and IndexAnnotation, over Annotation.
//
// LocalConfig reports whether kpt's local-config annotation is set.
func (r *Meta) LocalConfig() bool {
	v := r.Annotation(fn.KptLocalConfig)
	return v != "" && v != "false"
}

// Path is kpt's path annotation.
func (r *Meta) Path() string { return r.Annotation(kioutil.PathAnnotation) }

// Index is kpt's index annotation, -1 when it has none.
func (r *Meta) Index() int {
	v := r.Annotation(kioutil.IndexAnnotation)
	if v == "" {
		return -1
	}
	i, _ := strconv.Atoi(v)
	return i
}

// SetAnnotation sets an annotation, as the SDK's does on a tree: the
// value is replaced or the key added, and the getters read v from then
// on. The item's piece is not changed: the caller encodes the item again
// (Sink.Edit), as pkg/transform's uniquePaths does.
func (r *Meta) SetAnnotation(k, v string) error {
	if k == fn.UpstreamIdentifier {
		return fn.ErrAttemptToTouchUpstreamIdentifier{}
	}
	odd := r.oddPairs()
	odd = slices.DeleteFunc(slices.Clone(odd), func(p pair) bool { return p.key == annotationKey+k || p.key == emptyKey })
	annotations := r.Annotations()
	annotations[k] = v
	pairs := append(slices.Clone(r.labelPairs()), appendPairs(nil, annotations, interner{})...)
	r.pairs = append(pairs, odd...)
	r.annotations = uint32(len(annotations))
	return nil
}

// sortKey is the key ToYAML sorts items by: the SDK's own, spaces
// included.
func (r *Meta) sortKey() string {
	return r.APIVersion + " " + r.Kind + " " + r.Namespace + " " + r.Name
}

// pairMap is pairs as a map.
func pairMap(pairs []pair) map[string]string {
	m := make(map[string]string, len(pairs))
	for _, p := range pairs {
		m[p.key] = p.value
	}
	return m
}
