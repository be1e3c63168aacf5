package transform_test

// Issue 19, class 4: the function on its own output changes nothing,
// comments included, and keeps every comment exactly once: head, line
// and foot comments anywhere in a JobSet, after the last item of a list,
// at the end of a kpt package file.

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/internal/testenv"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// cmBase is a JobSet item with lists the function appends to (volumes,
// mounts, init containers), a sidecar, env and two replicatedJobs, in
// the block style kpt packages are written in.
var cmBase = strings.Split(`- apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  metadata:
    name: js
    namespace: ns
    annotations:
      flux-framework.org/enabled: "true"
      flux-framework.org/container: app
      internal.config.kubernetes.io/path: jobset.yaml
  spec:
    replicatedJobs:
      - name: w
        template:
          spec:
            completions: 2
            template:
              spec:
                initContainers:
                  - name: prep
                    image: busybox
                    command: [prep]
                containers:
                  - name: app
                    image: busybox
                    command:
                      - run
                      - it
                    env:
                      - name: A
                        value: b
                    volumeMounts:
                      - name: data
                        mountPath: /data
                  - name: side
                    image: busybox
                    volumeMounts:
                      - name: flux-config
                        mountPath: /cfg
                volumes:
                  - name: data
                    emptyDir: {}
      - name: v
        template:
          spec:
            template:
              spec:
                containers:
                  - name: app
                    image: busybox
                    command: [serve]`, "\n")

// cmInsert puts comments into cmBase as the bytes say: each pair of
// bytes picks a line and a place (a comment line after it, at its
// indentation, at a shallower one, at the item's own or at any other; or
// a comment at its end). It returns the item and the comments.
func cmInsert(data []byte) (string, []string) {
	lines := append([]string(nil), cmBase...)
	var comments []string
	for i := 0; i+1 < len(data) && len(comments) < 12; i += 2 {
		at := 2 + int(data[i])%(len(lines)-2) // never above kind: the item's first lines
		c := fmt.Sprintf("# c%d", len(comments))
		line := lines[at]
		indent := len(line) - len(strings.TrimLeft(line, " "))
		switch data[i+1] % 6 {
		case 0:
			lines = insertLine(lines, at, strings.Repeat(" ", indent)+c)
		case 1:
			lines = insertLine(lines, at, strings.Repeat(" ", max(2, indent-2))+c)
		case 2:
			// The item's own level: where a comment at the end of a kpt
			// package file is, once kpt has put the file into the list.
			lines = insertLine(lines, at, "  "+c)
		case 3:
			if strings.Contains(line, "#") {
				continue
			}
			lines[at] = line + " " + c
		default:
			// Any level: after the last item of an outer list.
			lines = insertLine(lines, at, strings.Repeat(" ", 2+2*(int(data[i+1]/6)%10))+c)
		}
		comments = append(comments, c)
	}
	return strings.Join(lines, "\n") + "\n", comments
}

func insertLine(lines []string, after int, line string) []string {
	return append(lines[:after+1], append([]string{line}, lines[after+1:]...)...)
}

// cmCheck renders the item twice and checks that the second render
// changes nothing and that every comment the first render kept is there
// once; with all set, that the first kept them all.
func cmCheck(t *testing.T, item string, comments []string, all bool) {
	t.Helper()
	first, second := hTwice(t, hRLHead+item)
	if !bytes.Equal(first, second) {
		t.Fatalf("the second render changed the output: %s\n--- input\n%s--- first\n%s", testenv.FirstDifference(second, first), item, first)
	}
	for _, c := range comments {
		n := bytes.Count(first, []byte(c+"\n"))
		if n > 1 || all && n != 1 {
			t.Fatalf("%q is in the output %d times:\n--- input\n%s--- output\n%s", c, n, item, first)
		}
	}
}

// cmStandalone renders the item as the command does plain YAML files
// (standalone mode: the item as a document of its own, followed by
// another) and returns what it writes.
func cmStandalone(t *testing.T, text []byte) []byte {
	t.Helper()
	items, err := resourcelist.Objects("in.yaml", text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	rl := &fn.ResourceList{Items: items, FunctionConfig: fn.NewEmptyKubeObject()}
	if ok, err := hProcessor(t).Process(rl); err != nil || !ok {
		t.Fatalf("refused (%v): %s", err, hDump(rl))
	}
	var out bytes.Buffer
	for i, it := range rl.Items {
		if i > 0 {
			out.WriteString("---\n")
		}
		out.WriteString(it.String())
	}
	return out.Bytes()
}

// cmDocument is the item as a document of a file of its own (column 0),
// followed by another document.
func cmDocument(item string) []byte {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(item, "\n"), "\n") {
		b.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "- "), "  ") + "\n")
	}
	b.WriteString("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n")
	return []byte(b.String())
}

// cmCheckStandalone is cmCheck in standalone mode.
func cmCheckStandalone(t *testing.T, item string, comments []string) {
	t.Helper()
	first := cmStandalone(t, cmDocument(item))
	if second := cmStandalone(t, first); !bytes.Equal(first, second) {
		t.Fatalf("standalone: the second render changed the output: %s\n--- first\n%s", testenv.FirstDifference(second, first), first)
	}
	for _, c := range comments {
		if n := bytes.Count(first, []byte(c+"\n")); n > 1 {
			t.Fatalf("standalone: %q is in the output %d times:\n%s", c, n, first)
		}
	}
}

// cmReaderKeeps reports whether the function's reader and writer alone
// (Parse, Encode) keep every comment once: yaml.v3 drops some comments in
// places no input seen so far holds (none of TestCommentsRandomPlaces').
func cmReaderKeeps(t *testing.T, item string, comments []string) bool {
	t.Helper()
	rl, err := resourcelist.Parse([]byte(hRLHead + item))
	if err != nil {
		t.Fatalf("the input does not parse: %v\n%s", err, item)
	}
	out, err := resourcelist.Encode(rl)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range comments {
		if bytes.Count(out, []byte(c+"\n")) != 1 {
			return false
		}
	}
	return true
}

// The cases of the issue, and the places a comment had trouble at.
func TestCommentsKeptOnce(t *testing.T) {
	for name, data := range map[string][]byte{
		"after the last replicatedJob":    {byte(len(cmBase) - 3), 4 + 6*2},
		"after the replicatedJobs":        {byte(len(cmBase) - 3), 4 + 6*1},
		"after the last container":        {byte(len(cmBase) - 3), 4 + 6*8},
		"end of the file":                 {byte(len(cmBase) - 3), 2},
		"after the last volume":           {42, 0},
		"after the last mount":            {33, 0},
		"after the last init container":   {20, 0},
		"above the containers":            {20, 1},
		"on the command":                  {25, 3, 26, 3, 27, 3},
		"after the last command item":     {27, 0},
		"after the first replicatedJob":   {42, 1},
		"at the end, every depth at once": {byte(len(cmBase) - 3), 0, byte(len(cmBase) - 3), 1, byte(len(cmBase) - 3), 2},
	} {
		t.Run(name, func(t *testing.T) {
			item, comments := cmInsert(data)
			cmCheck(t, item, comments, true)
			cmCheckStandalone(t, item, comments)
		})
	}
}

// FuzzComments puts comments at random places of a JobSet (kpt's block
// style, with a path annotation) and renders it twice: the same bytes,
// every comment kept at most once, and all of them when the YAML reader
// keeps them all.
//
//	go test -run='^$' -fuzz='^FuzzComments$' -fuzztime=30s ./pkg/transform
func FuzzComments(f *testing.F) {
	f.Add([]byte{byte(len(cmBase) - 3), 1})
	f.Add([]byte{42, 0, 33, 0, 20, 0})
	f.Add([]byte{25, 3, 27, 0, 5, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		item, comments := cmInsert(data)
		cmCheck(t, item, comments, cmReaderKeeps(t, item, comments))
		cmCheckStandalone(t, item, comments)
	})
}

// TestCommentsRandomPlaces is FuzzComments over a fixed stream of
// pseudo-random inputs, so that every run of the unit tests covers a few
// hundred placements (the fuzzer, minimizing each new input, runs only a
// few inputs a second).
func TestCommentsRandomPlaces(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 4))
	for i := range 200 {
		data := make([]byte, 2*(1+r.IntN(6)))
		for j := range data {
			data[j] = byte(r.IntN(256))
		}
		item, comments := cmInsert(data)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			cmCheck(t, item, comments, true)
			cmCheckStandalone(t, item, comments)
		})
	}
}
