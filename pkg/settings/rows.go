package settings

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
)

// Table returns the settings table's rows, in documentation order: what
// a user's page of the settings (README's table, the command's --help)
// is generated from, so that it never lists a setting that is not there
// or misses one that is. The rows are copies.
func Table() []Setting {
	rows := make([]Setting, len(table))
	copy(rows, table)
	return rows
}

// DefaultText is the row's default as a user's page words it: the
// default value, else DefaultDoc, else "none".
func (d Setting) DefaultText() string {
	switch {
	case d.DefaultDoc != "":
		return d.DefaultDoc
	case d.Default != "":
		return d.Default
	}
	return "none"
}

// Check validates one raw value of the named setting without applying it.
func Check(name, rule string) error {
	d, ok := byName(name)
	if !ok {
		return fmt.Errorf("unknown setting %s%s", finding.Quote(name), suggest(name))
	}
	var s Settings
	return d.rule.parse(&s, rule)
}

// Names returns every setting name, in documentation order.
func Names() []string {
	names := make([]string, len(table))
	for i, d := range table {
		names[i] = d.Name
	}
	return names
}

// Fields returns every JobSetFlux spec field, in documentation order.
func Fields() []string {
	fields := make([]string, len(table))
	for i, d := range table {
		fields[i] = d.Field
	}
	return fields
}

// OfField returns the setting name of a JobSetFlux spec field and the
// field's type.
func OfField(field string) (name string, typ Type, ok bool) {
	for _, d := range table {
		if d.Field == field {
			return d.Name, d.Type, true
		}
	}
	return "", Type{}, false
}

// LooksLikeEnabled reports whether an annotation name under the prefix
// is a misspelling of enabled: another case, a plural or tense, or one
// or two letters off a name that is no setting.
func LooksLikeEnabled(name string) bool {
	const want = "enabled"
	n := strings.ToLower(strings.TrimSpace(name))
	return n == want || n == "enable" || n == "enables" || n == "enabling" || !slices.Contains(Names(), name) && editDistance(n, want) <= 2
}

// suggest returns ` (did you mean "x"?)` for the closest known name, if close.
func suggest(name string) string {
	// The selector is no setting, but the likeliest misspelling of all.
	if editDistance(strings.ToLower(name), "enabled") <= 2 {
		return fmt.Sprintf(" (did you mean %q?)", EnabledAnnotation)
	}
	best, bestDist := "", 4
	for _, d := range table {
		if dist := editDistance(name, d.Name); dist < bestDist {
			best, bestDist = d.Name, dist
		}
	}
	if best == "" {
		return "; known settings: " + strings.Join(Names(), ", ")
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}
