package transform

import (
	"bytes"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn/testhelpers"
)

// testSeed is public: it only makes the golden files reproducible.
var testSeed = []byte("jobset-flux-test-seed-0123456789abcdef")

func newTestProcessor(t testing.TB, opts Options) *Processor {
	t.Helper()
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGolden renders every testdata/golden/<case>/ with a key seed and
// compares the whole output ResourceList, results included, with
// _expected.yaml. Regenerate with WRITE_GOLDEN_OUTPUT=1 and read the diff.
func TestGolden(t *testing.T) {
	testhelpers.RunGoldenTests(t, "testdata/golden", newTestProcessor(t, Options{Seed: testSeed}))
}

// TestGoldenRandomKey has no seed: the key comes from the random source
// (fixed here) and a warning says why renders then differ.
func TestGoldenRandomKey(t *testing.T) {
	zeros := bytes.NewReader(make([]byte, 1<<16))
	testhelpers.RunGoldenTests(t, "testdata/golden-random", newTestProcessor(t, Options{Random: zeros}))
}
