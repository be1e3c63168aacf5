package transform_test

// Issue 19, class 8, and issue 30: the lazy pair (resourcelist.Lazy,
// items parsed one at a time, into a SpoolSink) writes exactly the bytes
// of the in-memory pair (the whole tree), or refuses with
// resourcelist.ErrUnsafe before anything is written, on every golden
// list, package, pruning and path case, every hostile case of this
// package (hRun checks each), each fallback trigger, and fuzzed lists.

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/internal/testenv"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// stWhole is the in-memory pair: Parse, Whole, MemorySink. parsed is
// false when Parse refuses the list.
func stWhole(t testing.TB, in []byte) (out []byte, ok, parsed bool) {
	t.Helper()
	if _, err := resourcelist.Parse(in); err != nil {
		return nil, false, false
	}
	out, ok = ctWhole(t, "whole", in, resourcelist.NewMemorySink())
	return out, ok, true
}

// stStream is the lazy pair; streamed is false when it refused the
// list (ErrUnsafe; any other error fails the test).
func stStream(t testing.TB, in []byte) (out []byte, ok, streamed bool) {
	t.Helper()
	src, err := resourcelist.ParseLazy(in, transform.Keeps)
	if err == nil {
		sink := resourcelist.NewSpoolSink(testSpool(t))
		var results fn.Results
		if results, ok, err = hProcessor(t).Render(src, sink); err == nil {
			var b bytes.Buffer
			if err := sink.Write(&b, src.FunctionConfig(), results); err != nil {
				t.Fatalf("Write: %v", err)
			}
			return b.Bytes(), ok, true
		}
		sink.Release()
	}
	if !errors.Is(err, resourcelist.ErrUnsafe) {
		t.Fatalf("the lazy pair failed with an error that is not ErrUnsafe: %v", err)
	}
	return nil, false, false
}

// stSame fails unless the streaming path refuses in or writes the whole
// path's bytes with its outcome. It returns the whole path's output and
// whether the list was streamed.
func stSame(t testing.TB, name string, in []byte) ([]byte, bool) {
	t.Helper()
	want, ok, parsed := stWhole(t, in)
	got, okS, streamed := stStream(t, in)
	switch {
	case streamed && !parsed:
		t.Fatalf("%s: streamed a list that Parse refuses\n--- input\n%s", name, in)
	case streamed && (ok != okS || !bytes.Equal(got, want)):
		t.Fatalf("%s: streamed (ok %v) differs from the whole parse (ok %v): %s\n--- input\n%s", name, okS, ok, testenv.FirstDifference(got, want), in)
	}
	return want, streamed
}

// stMustStream is stSame for a list that the streaming path must take.
func stMustStream(t *testing.T, name string, in []byte) []byte {
	t.Helper()
	out, streamed := stSame(t, name, in)
	if !streamed {
		_, err := resourcelist.ParseLazy(in, transform.Keeps)
		t.Fatalf("%s: not streamed (%v)", name, err)
	}
	return out
}

// TestStreamSameBytesGolden: every golden list as kpt hands it over
// (streamed), its re-render and its _expected.yaml.
func TestStreamSameBytesGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/golden*/*")
	if err != nil || len(dirs) < 25 {
		t.Fatalf("found %d golden cases (%v)", len(dirs), err)
	}
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			res, err := os.ReadFile(filepath.Join(dir, "resources.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			config, _ := os.ReadFile(filepath.Join(dir, "_fnconfig.yaml"))
			in := ctList(t, map[string]string{"resources.yaml": string(res)}, string(config))
			var out []byte
			if strings.Contains(string(in), "#") {
				out, _ = stSame(t, "first render", in) // comments may make it unsafe
			} else {
				out = stMustStream(t, "first render", in)
			}
			stSame(t, "second render", out)
			expected, err := os.ReadFile(filepath.Join(dir, "_expected.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			stSame(t, "_expected.yaml", expected)
		})
	}
}

// TestStreamSameBytesPackages: every kpt test package and example as kpt
// hands it over, and its re-render (generated objects replace the
// input's, which the loop then never loads: Verify checks them).
func TestStreamSameBytesPackages(t *testing.T) {
	dirs, err := filepath.Glob("../../test/kpt/testdata/cases/*")
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Glob("../../examples/*")
	if err != nil {
		t.Fatal(err)
	}
	streamed := 0
	for _, dir := range append(dirs, examples...) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			files := ctDir(t, dir)
			if len(files) == 0 {
				t.Skip("no YAML")
			}
			out, s := stSame(t, "first render", ctList(t, files, ""))
			_, s2 := stSame(t, "second render", out)
			for _, b := range []bool{s, s2} {
				if b {
					streamed++
				}
			}
		})
	}
	if streamed < len(dirs) {
		t.Fatalf("only %d of %d renders were streamed: the test proves little", streamed, 2*len(dirs)+2*len(examples))
	}
}

// TestStreamSameBytesPruneAndPaths: orphans removed, an orphan kept for
// a reference, a shared CURVE Secret, objects moved to free files; each
// streamed.
func TestStreamSameBytesPruneAndPaths(t *testing.T) {
	first := stMustStream(t, "render", ctList(t, map[string]string{"js.yaml": ctJobSet("old", "hpc", "")}, ""))
	renamed := bytes.ReplaceAll(first, []byte("name: old\n"), []byte("name: new\n"))
	if out := stMustStream(t, "renamed: orphans removed", renamed); !bytes.Contains(out, []byte("removed: jobset-flux generated this ConfigMap")) {
		t.Fatalf("the orphans were not removed:\n%s", out)
	}
	kept := bytes.Replace(renamed, []byte("items:\n"), []byte("items:\n"+ctPodItem()), 1)
	if out := stMustStream(t, "an orphan still named: kept", kept); !bytes.Contains(out, []byte("still refers to it")) {
		t.Fatalf("the named orphan was not kept:\n%s", out)
	}
	stMustStream(t, "shared curve secret", ctList(t, map[string]string{
		"a.yaml":      ctJobSet("a", "hpc", ""),
		"b.yaml":      ctJobSet("b", "hpc", "\n    flux-framework.org/curve-secret: a-flux-curve"),
		"secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a-flux-curve\n  namespace: hpc\n",
	}, ""))
	two := ctList(t, map[string]string{"js.yaml": ctJobSet("same", "one", "") + "---\n" + ctJobSet("same", "two", "")}, "")
	out := stMustStream(t, "one name, two namespaces", two)
	stMustStream(t, "one name, two namespaces, again", out)
	bad := ctList(t, map[string]string{"js.yaml": ctJobSet("a", "hpc", "")}, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {nodes: x}\n")
	if out := stMustStream(t, "an error in the config: items untouched", bad); !bytes.Contains(out, []byte("severity: error")) {
		t.Fatalf("no error for the config:\n%s", out)
	}
}

// stStreamItem is a ConfigMap item of a list.
const stStreamItem = "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n  data:\n    k: v\n"

// TestStreamFallbacks: each list whose items do not read alone as in the
// list is refused (ErrUnsafe) and rendered by the whole parse, with the
// same bytes.
func TestStreamFallbacks(t *testing.T) {
	head := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
	cases := map[string]string{
		"alias to another item":       head + "items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  data: &d {k: v}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n  data: *d\n",
		"alias to the functionConfig": head + "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: f}\n  data: &d {a: b}\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n  data: *d\n",
		"alias into the items":        head + "items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  data: &d {k: v}\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: f}\n  data: *d\n",
		"tag":                         head + "items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  data: !!map {k: v}\n",
		"local tag":                   head + "items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  data: {k: !mine v}\n",
		"key that is not a scalar":    head + "items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  data: {[k]: v, [k]: w}\n",
		"quoted scalar holding a key": head + "results: \"x\nitems:\n" + stStreamItem + "functionConfig: y\"\n",
		"item that does not parse":    head + "items:\n" + stStreamItem + "- apiVersion: v1\n  kind: [\n",
		"item that is not a map":      head + "items:\n- just text\n",
		"quoted scalar across items":  head + "items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: \"a\n- b\"}\n",
		"flow top":                    `{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}]}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if _, streamed := stSame(t, name, []byte(in)); streamed {
				t.Fatalf("streamed; want the whole parse")
			}
		})
	}
}

// TestStreamReadsRight: lists the streaming path takes although their
// lines could mislead it, with the whole parse's bytes: an anchor and
// its aliases inside one item; a line that looks like an item's metadata
// inside a quoted scalar (the stub is then read from the whole item); a
// head comment after an item's "- "; comments between, before and after
// items, as the benchmark lists and kpt's package files have them.
func TestStreamReadsRight(t *testing.T) {
	head := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
	for name, in := range map[string]string{
		"anchor in one item":           head + "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  data: {k: &v x, l: *v}\n" + stStreamItem,
		"metadata key inside a scalar": head + "- apiVersion: v1\n  kind: ConfigMap\n  data:\n    k: \"x\n  metadata: {name: hidden}\"\n  metadata: {name: real}\n",
		"head comment after the dash":  head + "- # first\n  # second\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n" + stStreamItem,
		"comment between items":        head + stStreamItem + "# c\n" + stStreamItem,
		"comments around items":        head + "# top\n\n" + stStreamItem + "  # foot of a\n\n# head of b\n" + stStreamItem + "    # deep\n# last\n",
		"comments before the config":   head + stStreamItem + stStreamItem + "  # foot\n# before the config\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: f}\n",
	} {
		out := stMustStream(t, name, []byte(in))
		if name == "metadata key inside a scalar" && !bytes.Contains(out, []byte("name: real")) {
			t.Fatalf("%s:\n%s", name, out)
		}
	}
}

// FuzzStream: for any list, the streaming path refuses it or writes the
// whole parse's bytes, and never streams a list Parse refuses.
func FuzzStream(f *testing.F) {
	f.Add([]byte(ctListF(f, ctJobSet("a", "hpc", "")+"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n")))
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + stStreamItem + "  - apiVersion: v1\n    kind: Secret\n    metadata: {name: s}\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: f}\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 1<<14 {
			return
		}
		stSame(t, "fuzzed", in)
	})
}

// ctListF is a list of the objects of one file, for a fuzz target's
// seeds.
func ctListF(f *testing.F, file string) string {
	objs, err := resourcelist.Objects("js.yaml", []byte(file))
	if err != nil {
		f.Fatal(err)
	}
	var b bytes.Buffer
	if err := resourcelist.Write(&b, &fn.ResourceList{Items: objs, FunctionConfig: fn.NewEmptyKubeObject()}); err != nil {
		f.Fatal(err)
	}
	return b.String()
}

// TestStreamUnreadableSecretFallsBack: class 7, a Secret of the name a
// JobSet's CURVE Secret takes that the streaming source cannot give (it
// reads otherwise alone: here the list's kind follows its items, so the
// last item alone repeats the key) makes the streamed render fail with
// resourcelist.ErrUnsafe, so that the list is parsed whole. It was taken
// for absent: a new Secret was generated in its place, and the input's
// was neither checked nor written.
func TestStreamUnreadableSecretFallsBack(t *testing.T) {
	secret := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "js-flux-curve", "namespace": "ns"},
		"data": map[string]any{"other": "YQ=="}}
	in := hList(t, nil, hJobSet{namespace: "ns", ann: map[string]string{"flux-framework.org/enabled": "true"}}.object(), secret)
	src, err := resourcelist.ParseLazy(in, transform.Keeps)
	if err != nil {
		t.Skipf("not streamed at all: %v", err)
	}
	sink := resourcelist.NewSpoolSink(nil)
	defer sink.Release()
	if _, ok, err := hProcessor(t).Render(src, sink); !errors.Is(err, resourcelist.ErrUnsafe) {
		t.Fatalf("Render = ok %v, %v; want resourcelist.ErrUnsafe", ok, err)
	}
	if _, ok, _ := stWhole(t, in); ok {
		t.Errorf("the whole parse rendered a JobSet whose CURVE Secret has no certificate")
	}
}
