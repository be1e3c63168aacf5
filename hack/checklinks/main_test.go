package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// write makes the files of a small tree under a temporary root.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestCheck: every kind of broken relative link is reported with its file,
// line and reason, and none of the links that resolve (or are not relative,
// or sit in code) is.
func TestCheck(t *testing.T) {
	root := write(t, map[string]string{
		"README.md": "# Top\n\n## Choosing `view-mount`\n\n" +
			"[ok](docs/user/a.md) [ok](docs/user/a.md#the-a-page) [ok](#choosing-view-mount) [ok](docs/)\n" +
			"[gone](docs/a.md)\n" +
			"[bad anchor](docs/user/a.md#nowhere)\n" +
			"[web](https://example.com/x.md) [mail](mailto:a@b) `[code](nowhere.md)`\n" +
			"```\n[fenced](nowhere.md)\n```\n" +
			"[ref]: docs/missing.md\n" +
			"[abs](/docs/user/a.md)\n",
		"docs/user/a.md": "# The A page\n\n## Twice\n\n## Twice\n\n[up](../../README.md#top) [second](#twice-1) [dir](../../docs)\n" +
			"[not a sibling](b.md) [no third](#twice-2)\n",
		"bin/ignored.md": "[broken](nowhere.md)\n",
	})
	got, err := check(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:6: docs/a.md: no such file or directory",
		"README.md:7: docs/user/a.md#nowhere: no heading with the anchor #nowhere",
		"README.md:12: docs/missing.md: no such file or directory",
		"README.md:13: /docs/user/a.md: an absolute path: link relative to the file",
		"docs/user/a.md:8: b.md: no such file or directory",
		"docs/user/a.md:8: #twice-2: no heading with the anchor #twice-2",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("check reported\n%q\nwant\n%q", got, want)
	}
}

// TestCheckRepository: this repository's own Markdown has no broken
// relative link (make lint runs the command too; this keeps go test honest
// on its own).
func TestCheckRepository(t *testing.T) {
	got, err := check("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range got {
		t.Error(b)
	}
}

// TestCheckMissingRoot: a root that does not exist is an error, not an
// empty, passing check.
func TestCheckMissingRoot(t *testing.T) {
	if _, err := check(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("check of a missing root returned no error")
	}
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"What a render removes, and what it keeps": "what-a-render-removes-and-what-it-keeps",
		"`/dev/shm`: 4.25 MiB per MPICH task":      "devshm-425-mib-per-mpich-task",
		"Choosing view-mount":                      "choosing-view-mount",
		"snake_case and CAPS":                      "snake_case-and-caps",
	} {
		if got := slugify(in); got != want {
			t.Errorf("slugify(%q) = %q, want %q", in, got, want)
		}
	}
}
