package resourcelist

// Issue 19, class 4, at the reader and writer: a ResourceList read and
// written again is written the same the next time, every comment kept
// once, wherever the comment is; a comment that ends an item comes back on
// the node of its own column, as kpt reads the package file it came from.

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// cmItems are three items in kpt's compact style: nested maps and lists,
// the last lines at several depths.
var cmItems = strings.Split(`- apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  metadata:
    name: js
    annotations:
      internal.config.kubernetes.io/path: jobset.yaml
  spec:
    replicatedJobs:
    - name: w
      template:
        spec:
          template:
            spec:
              containers:
              - name: app
                command: [run]
                env:
                - name: A
                  value: b
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: cm
  data:
    a: "1"
    script: |
      #!/bin/sh
      # not a comment: text of the script
- apiVersion: v1
  kind: Service
  metadata:
    name: svc
  spec:
    ports:
    - port: 80`, "\n")

const cmHead = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"

// cmPlace puts comments into cmItems as data says: each pair of bytes
// picks a line, and an indentation for a comment line after it (0 to 16
// spaces, any of them, so at the item's level, at a shallower or deeper
// one, in column 0 between items), or a comment at the end of the line.
// The functionConfig, in column 0, follows the last item.
func cmPlace(data []byte) (string, []string) {
	lines := append([]string(nil), cmItems...)
	var comments []string
	for i := 0; i+1 < len(data) && len(comments) < 10; i += 2 {
		at := int(data[i]) % len(lines)
		c := fmt.Sprintf("# k%d", len(comments))
		if strings.HasPrefix(strings.TrimSpace(lines[at]), "#") || strings.HasSuffix(lines[at], "|") {
			continue // a comment after a comment, or inside a block scalar
		}
		if data[i+1]%9 == 8 {
			if strings.Contains(lines[at], "#") {
				continue
			}
			lines[at] += " " + c
		} else {
			lines = append(lines[:at+1], append([]string{strings.Repeat(" ", 2*int(data[i+1]%9)) + c}, lines[at+1:]...)...)
		}
		comments = append(comments, c)
	}
	return cmHead + strings.Join(lines, "\n") + "\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cfg\n", comments
}

// cmRound is the function's reader and writer once.
func cmRound(t *testing.T, in []byte) []byte {
	t.Helper()
	rl, err := Parse(in)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, in)
	}
	out, err := Encode(rl)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return out
}

// cmCheck: the second round writes the bytes of the first, and no
// comment is written twice (yaml.v3 drops a comment in a few places it
// cannot attach one; with all set, none may be lost).
func cmCheck(t *testing.T, in string, comments []string, all bool) {
	t.Helper()
	first := cmRound(t, []byte(in))
	if second := cmRound(t, first); !bytes.Equal(first, second) {
		t.Fatalf("written again, the list changed:\n--- input\n%s--- first\n%s--- second\n%s", in, first, second)
	}
	for _, c := range comments {
		n := bytes.Count(first, []byte(c+"\n"))
		if n > 1 || all && n != 1 {
			t.Fatalf("%q is written %d times:\n--- input\n%s--- output\n%s", c, n, in, first)
		}
	}
}

// TestCommentsEveryPlace: comments before, between and after items, at
// the end of the list, foot comments of maps and lists at every depth,
// head comments of the first item, runs of falling indentation.
func TestCommentsEveryPlace(t *testing.T) {
	last := byte(len(cmItems) - 1)
	for name, data := range map[string][]byte{
		"head of the first item":           {0, 1},
		"line of the first item":           {0, 8},
		"end of the first item, own level": {18, 1},
		"end of the first item, column 0":  {18, 0},
		"end of the first item, deep":      {18, 7},
		"falling run after the first item": {18, 7, 18, 4, 18, 1},
		"rising run after the first item":  {18, 1, 18, 4, 18, 7},
		"after a block scalar":             {26, 2, 26, 1},
		"end of the last item":             {last, 1, last, 2, last, 0},
		"column 0 after the last item":     {last, 0},
		"between keys":                     {3, 2, 13, 7},
	} {
		t.Run(name, func(t *testing.T) {
			in, comments := cmPlace(data)
			cmCheck(t, in, comments, true)
		})
	}
}

// TestCommentEndOfItemColumn: a comment that ends an item, followed at
// once by the next item (as kpt hands over the end-of-file comment of a
// package file), is read onto the key of its column, as kpt reads the
// file; Encode writes a blank line after it so that it is read there
// again.
func TestCommentEndOfItemColumn(t *testing.T) {
	in := cmHead + `- apiVersion: a
  kind: K
  metadata: {name: a}
  spec:
    x:
      z:
        w: 2
  # end of the file
- apiVersion: b
  kind: K
  metadata: {name: b}
`
	rl, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	n := yamltree.NodeOf(rl.Items[0])
	spec := n.Content[len(n.Content)-2]
	if spec.Value != "spec" || spec.FootComment != "# end of the file" {
		t.Fatalf("the comment is not on spec: %q", spec.FootComment)
	}
	out, err := Encode(rl)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte("  # end of the file\n\n- apiVersion: b\n")) {
		t.Fatalf("no blank line after the comment:\n%s", out)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fmt.Sprint(doc.Content[0].Content[5].Content[0].Content[7].FootComment, spec.FootComment), "# end of the file") {
		t.Fatalf("a plain yaml.v3 reader does not read the comment on spec:\n%s", out)
	}
}

// FuzzCommentsRoundTrip puts comments at random places of a three-item
// list (any line, any indentation, line comments) and checks that the
// function's reader and writer are a fixed point after one round and
// never write a comment twice, nor lose one that yaml.v3 reads.
//
//	go test -run='^$' -fuzz='^FuzzCommentsRoundTrip$' -fuzztime=30s ./pkg/resourcelist
func FuzzCommentsRoundTrip(f *testing.F) {
	f.Add([]byte{18, 7, 18, 4, 18, 1})
	f.Add([]byte{0, 1, 26, 2, byte(len(cmItems) - 1), 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		in, comments := cmPlace(data)
		cmCheck(t, in, comments, cmYAMLKeeps(in, comments))
	})
}

// TestCommentsRandomPlaces is FuzzCommentsRoundTrip over a fixed stream of
// pseudo-random placements, so every run of the unit tests covers them.
func TestCommentsRandomPlaces(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 8))
	for i := range 500 {
		data := make([]byte, 2*(1+r.IntN(6)))
		for j := range data {
			data[j] = byte(r.IntN(256))
		}
		in, comments := cmPlace(data)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			cmCheck(t, in, comments, cmYAMLKeeps(in, comments))
		})
	}
}

// cmYAMLKeeps reports whether yaml.v3 itself keeps every comment of in
// (decoding and encoding the whole document).
func cmYAMLKeeps(in string, comments []string) bool {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(in), &doc); err != nil {
		return false
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return false
	}
	for _, c := range comments {
		if bytes.Count(out, []byte(c+"\n")) != 1 {
			return false
		}
	}
	return true
}
