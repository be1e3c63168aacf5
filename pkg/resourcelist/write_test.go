package resourcelist

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Issue 19, class 8: Write gives Encode's bytes (ToYAML's) for every
// shape and golden list, and releases each item once it is encoded.
func TestWriteMatchesEncode(t *testing.T) {
	inputs := map[string][]byte{}
	for name, s := range shapes {
		inputs[name] = []byte(s)
	}
	files, _ := filepath.Glob("../transform/testdata/golden*/*/_expected.yaml")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = b
	}
	inputs["empty"] = []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n")
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			ref, err := fn.ParseResourceList(in)
			if err != nil {
				t.Fatal(err)
			}
			sortItems(ref.Items)
			want, err := Encode(ref)
			if err != nil {
				t.Fatal(err)
			}
			rl, err := fn.ParseResourceList(in)
			if err != nil {
				t.Fatal(err)
			}
			sortItems(rl.Items)
			var got bytes.Buffer
			if err := Write(&got, rl); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("Write differs from Encode at byte %d\n%s", firstDiff(got.Bytes(), want), diffContext(got.Bytes(), want))
			}
			for i, it := range rl.Items {
				if it != nil {
					t.Errorf("items[%d] is still held after Write", i)
				}
			}
		})
	}
}

// An item that cannot be encoded: an error naming it, and nothing written.
func TestWriteError(t *testing.T) {
	rl := unwritableList(t)
	var out bytes.Buffer
	err := Write(&out, rl)
	if err == nil || !strings.Contains(err.Error(), "items[1] (ConfigMap broken)") || out.Len() != 0 {
		t.Errorf("got %d bytes and error %v; want none and an error naming items[1] (ConfigMap broken)", out.Len(), err)
	}
	if err := Write(failingWriter{}, &fn.ResourceList{FunctionConfig: fn.NewEmptyKubeObject()}); err == nil {
		t.Error("a failing writer is not reported")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// The trees are collectable while the rest of the list is encoded: by
// the end, the live heap holds the output and not the trees, which take
// several times its size. Encode needs both at once (and a copy).
func TestWriteReleasesTrees(t *testing.T) {
	in := bigConfigMapList(8000)
	rl, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	in = nil
	sortItems(rl.Items)
	before := liveHeap()
	var out bytes.Buffer
	if err := Write(&out, rl); err != nil {
		t.Fatal(err)
	}
	after := liveHeap()
	runtime.KeepAlive(rl)
	// after holds the output buffer (and its growth slack), not the trees.
	if after > before/2 {
		t.Errorf("live heap %d MiB after Write (output %d MiB) vs %d MiB of trees before; the trees were not released",
			after>>20, out.Len()>>20, before>>20)
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// bigConfigMapList is a ResourceList of n small ConfigMaps.
func bigConfigMapList(n int) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := range n {
		b.WriteString("- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-")
		b.WriteString(strings.Repeat("x", i%7) + string(rune('a'+i%26)))
		b.WriteString("\n    namespace: ns-" + string(rune('a'+i%13)) + "\n    labels: {app: web, tier: front}\n")
		b.WriteString("  data:\n    LOG_LEVEL: info\n    FLAGS: \"a,b,c\"\n    port: \"8080\"\n")
	}
	return b.Bytes()
}
