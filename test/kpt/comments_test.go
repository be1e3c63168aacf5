package kpt

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// commentMarks are the comments of testdata/comments: "# cNN ..." in
// every place of a package (head and line comments, foot comments of maps
// and lists at every depth, after the last item of lists the function
// appends to, between documents, a document of comments only, at the end
// of each file).
var commentMark = regexp.MustCompile(`# c[0-9][0-9]\b`)

// TestCommentsThroughRender (issue 19, class 4): a real kpt fn render of a
// package with comments everywhere, three times. After the first render
// every comment of the package is in its file exactly once; the second
// and third renders change no byte of any file (a comment at the end of
// a file came back twice on the second render: kpt copies comments back
// from its own reading of the file when the function's output has them
// on another node).
func TestCommentsThroughRender(t *testing.T) {
	needTools(t)
	pkg := filepath.Join(t.TempDir(), "comments")
	copyPackage(t, filepath.Join(setup.root, "test", "kpt", "testdata", "comments"), pkg)
	before := snapshot(t, pkg)
	marks := map[string][]string{}
	for name, data := range before {
		marks[name] = slices.DeleteFunc(commentMark.FindAllString(string(data), -1), func(m string) bool {
			// kpt's reader drops a document of comments only before any
			// function runs (it holds no object to attach them to).
			return m == "# c15"
		})
	}
	if n := len(marks["jobset.yaml"]) + len(marks["more.yaml"]); n != 16 {
		t.Fatalf("testdata/comments holds %d comments besides c15, want 16", n)
	}
	var renders []map[string][]byte
	for i := range 3 {
		mustKpt(t, pkg, seeded(), "fn", "render", pkg, "--allow-exec")
		renders = append(renders, snapshot(t, pkg))
		if i == 0 {
			checkCommentsOnce(t, marks, renders[0])
		}
	}
	for i := 1; i < 3; i++ {
		if diff := changes(renders[i-1], renders[i]); len(diff) > 0 {
			t.Errorf("render %d changed the package: %v\n--- jobset.yaml after render %d\n%s--- after render %d\n%s",
				i+1, diff, i, renders[i-1]["jobset.yaml"], i+1, renders[i]["jobset.yaml"])
		}
	}
}

// checkCommentsOnce fails unless every comment of a file is in it once.
func checkCommentsOnce(t *testing.T, marks map[string][]string, files map[string][]byte) {
	t.Helper()
	for name, want := range marks {
		got := commentMark.FindAllString(string(files[name]), -1)
		slices.Sort(got)
		w := slices.Clone(want)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("%s after the first render holds comments %s, want each of %s once:\n%s", name, strings.Join(got, " "), strings.Join(w, " "), files[name])
		}
	}
}
