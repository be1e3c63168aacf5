package settings

import (
	"fmt"
	"maps"
	"slices"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
)

// Defaults returns the built-in defaults: each row's Default, stored
// unchecked (TestDefaultsValid checks them).
func Defaults() Settings {
	s := Settings{resolved: true}
	for i := range table {
		if d := &table[i]; d.Default != "" {
			d.rule.set(&s, d.Default)
		}
	}
	return s
}

// Config returns the settings every JobSet starts from: the defaults with
// the function config's layer applied, and the errors of its values.
func Config(layer Layer) (Settings, finding.List) {
	s := Defaults()
	found := s.Apply(layer)
	return s, found
}

// Apply parses each value of layer, once, and keeps it unless a layer of
// higher precedence set the setting already: the result does not depend
// on the order layers are applied in (Resolve applies the annotations
// before the environment, which lives on the containers they choose). An
// invalid value is an error at the path it was read from, naming its
// layer (the config's errors are reported against the config object,
// which names it), and the setting keeps the value it had. s's origins
// are copied before they change, so a copy of s shares nothing with it.
func (s *Settings) Apply(layer Layer) finding.List {
	var found finding.List
	if len(layer.Values) == 0 {
		return found
	}
	origins := make(map[string]origin, len(s.origins)+len(layer.Values))
	maps.Copy(origins, s.origins)
	s.origins = origins
	for _, name := range slices.Sorted(maps.Keys(layer.Values)) {
		raw := layer.Values[name]
		d, ok := byName(name)
		if !ok {
			found.Errorf(raw.Path, "unknown setting %s%s", finding.Quote(name), suggest(name))
			continue
		}
		target := s
		if o, set := s.origins[name]; set && o.kind > layer.Kind {
			// Checked all the same, so that every bad value is reported.
			target = &Settings{}
		}
		if raw.Value == "" && d.Default == "" && d.rule.clear != nil {
			// An empty value puts a setting that has no default back to
			// none (or derived), over what a lower layer set: a JobSet
			// must be able to opt out of a site-wide value, such as the
			// function config's run-options, which a launcher JobSet
			// cannot have. The setting is at its default, so it has no
			// origin to report, but the layer is kept: a lower one applied
			// later (the environment) does not bring the value back.
			d.rule.clear(target)
			if target == s {
				s.origins[name] = origin{kind: layer.Kind}
			}
			continue
		}
		if err := d.rule.parse(target, raw.Value); err != nil {
			from := ""
			if layer.Kind != FromConfig {
				from = " from the " + layer.Kind.String()
			}
			found = append(found, finding.Finding{
				Severity: finding.Error,
				Path:     raw.Path,
				Current:  raw.Value,
				Message:  fmt.Sprintf("invalid %s%s: %v", name, from, err),
			})
			continue
		}
		if target == s {
			s.origins[name] = origin{path: raw.Path, kind: layer.Kind}
		}
	}
	return found
}
