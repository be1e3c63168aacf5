package main

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// checkHelp checks a --help text against the settings table: each row,
// in order, has its heading line (name, field, type, default) followed
// by its meaning, and no other setting is listed.
func checkHelp(t *testing.T, help string) {
	t.Helper()
	for _, want := range []string{"Usage:", "jobset-flux [flags] -", "-config", "-key-seed-file", "-max-input", "-v\t",
		settings.AnnotationPrefix + "NAME", "JOBSET_FLUX_KEY_SEED", "Example:", "flux-framework.org/enabled: \"true\"",
		"kpt fn eval", "kustomize build", "--post-renderer"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	_, listed, ok := strings.Cut(help, "\nSettings:")
	if !ok {
		t.Fatalf("--help has no Settings section:\n%s", help)
	}
	listed, _, _ = strings.Cut(listed, "\nExample:")
	lines := strings.Split(listed, "\n")
	// The headings are the lines indented by two spaces and not more.
	var headings []int
	for i, line := range lines {
		if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
			headings = append(headings, i)
		}
	}
	rows := settings.Table()
	if len(headings) != len(rows) {
		t.Fatalf("--help lists %d settings, the table has %d:\n%s", len(headings), len(rows), listed)
	}
	for i, row := range rows {
		typ := row.Type.JSON
		if typ == "array" {
			typ = "list of strings"
		}
		def := strings.ReplaceAll(row.DefaultText(), "`", "")
		if want := "  " + row.Name + " (" + row.Field + ", " + typ + "; default: " + def + ")"; lines[headings[i]] != want {
			t.Errorf("setting %d: heading %q, want %q", i, lines[headings[i]], want)
		}
		end := len(lines)
		if i+1 < len(headings) {
			end = headings[i+1]
		}
		var meaning []string
		for _, line := range lines[headings[i]+1 : end] {
			if line != "" && !strings.HasPrefix(line, "        ") {
				t.Errorf("%s: line %q is not indented as a meaning", row.Name, line)
			}
			meaning = append(meaning, strings.TrimSpace(line))
		}
		got := strings.Join(strings.Fields(strings.Join(meaning, " ")), " ")
		want := strings.Join(strings.Fields(strings.ReplaceAll(row.Doc, "`", "")), " ")
		if got != want {
			t.Errorf("%s: meaning\n  %q\nwant\n  %q", row.Name, got, want)
		}
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"", 10, nil},
		{"one two three", 7, []string{"one two", "three"}},
		{"averyveryverylongword x", 5, []string{"averyveryverylongword", "x"}},
		{"  spaced   out  ", 80, []string{"spaced out"}},
	} {
		got := wrap(tc.in, tc.width)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}
