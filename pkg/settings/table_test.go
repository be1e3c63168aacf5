package settings

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// The defaults, stored unchecked, are valid values of their settings, and
// parse to what Defaults stores.
func TestDefaultsValid(t *testing.T) {
	d := Defaults()
	if !d.Resolved() {
		t.Error("Defaults() is not marked resolved")
	}
	for _, row := range table {
		if row.Default == "" {
			continue
		}
		if row.rule.set == nil {
			t.Errorf("%s has a default but its kind of value cannot store one", row.Name)
			continue
		}
		parsed := Settings{resolved: true}
		if err := row.rule.parse(&parsed, row.Default); err != nil {
			t.Errorf("default %s=%q: %v", row.Name, row.Default, err)
		}
		stored := Settings{resolved: true}
		row.rule.set(&stored, row.Default)
		if !reflect.DeepEqual(parsed, stored) {
			t.Errorf("default %s=%q parses to %+v, but is stored as %+v", row.Name, row.Default, parsed, stored)
		}
	}
	if d.Port != 8050 || d.QueuePolicy != "fcfs" || d.Launcher || d.ViewImage != "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy" {
		t.Errorf("Defaults() = %+v", d)
	}
}

// readmeRows are README's settings table as the table writes it: a header,
// the enabled marker (no setting: it selects the JobSet), then one row per
// setting.
func readmeRows() []string {
	rows := []string{
		"| name (`flux-framework.org/…`) | JobSetFlux field | default | meaning |",
		"|---|---|---|---|",
		"| `enabled` | – | – | `\"true\"` selects the JobSet (annotation only) |",
	}
	for _, d := range table {
		def := d.DefaultDoc
		switch {
		case def != "":
		case d.Default != "":
			def = "`" + d.Default + "`"
		default:
			def = "none"
		}
		rows = append(rows, "| `"+d.Name+"` | `"+d.Field+"` | "+def+" | "+d.Doc+" |")
	}
	return rows
}

// TestREADMESettingsTable: README's settings table is the settings table,
// row for row. On a difference it prints the rows to paste.
func TestREADMESettingsTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := readmeRows()
	lines := strings.Split(string(readme), "\n")
	start := -1
	for i, line := range lines {
		if line == want[0] {
			start = i
			break
		}
	}
	if start < 0 {
		t.Fatalf("README has no settings table starting %q; it should read:\n%s", want[0], strings.Join(want, "\n"))
	}
	var got []string
	for _, line := range lines[start:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		got = append(got, line)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		for i := range max(len(got), len(want)) {
			g, w := "", ""
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				t.Errorf("README settings table, row %d:\n got: %s\nwant: %s", i, g, w)
			}
		}
		t.Errorf("README's settings table (line %d) differs from the settings table; replace it with:\n%s", start+1, strings.Join(want, "\n"))
	}
}

// Every row is complete: names, a field, a parser, documentation, and a
// default or words for it where the README needs them.
func TestTableRows(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range table {
		switch {
		case d.Name == "" || d.Field == "" || d.Doc == "" || d.rule.parse == nil:
			t.Errorf("incomplete row %+v", d)
		case seen[d.Name] || seen[d.Field]:
			t.Errorf("%s or %s is in the table twice", d.Name, d.Field)
		case d.Default != "" && d.DefaultDoc != "":
			t.Errorf("%s has both a default and words for it", d.Name)
		case strings.Contains(d.Doc+d.DefaultDoc, "|") || strings.Contains(d.Doc+d.DefaultDoc, "\n"):
			t.Errorf("%s: a | or a newline would break README's table", d.Name)
		}
		seen[d.Name], seen[d.Field] = true, true
		if d.Env != "" && EnvNames[d.Env] != d.Name {
			t.Errorf("env %s does not map to %s", d.Env, d.Name)
		}
	}
}
