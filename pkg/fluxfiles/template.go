package fluxfiles

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// The templates of the scripts: entrypoint.sh is filled with one part per
// mode and per kind of Flux, each a template of its own.
var (
	//go:embed init.sh.tmpl
	initText string
	//go:embed entrypoint.sh.tmpl
	entrypointText string
	//go:embed entrypoint-interactive.sh.tmpl
	interactiveText string
	//go:embed entrypoint-launcher.sh.tmpl
	launcherText string
	//go:embed entrypoint-setup.sh.tmpl
	setupText string
	//go:embed entrypoint-findflux.sh.tmpl
	findFluxText string
	//go:embed entrypoint-flux-view.sh.tmpl
	viewFluxText string
	//go:embed entrypoint-flux-mounted.sh.tmpl
	mountedFluxText string
	//go:embed entrypoint-flux-image.sh.tmpl
	imageFluxText string
	//go:embed entrypoint-run.sh.tmpl
	runText string
	//go:embed entrypoint-elastic.sh.tmpl
	elasticText string
	//go:embed entrypoint-hangs.sh.tmpl
	hangsText string
	//go:embed entrypoint-queues.sh.tmpl
	queuesText string
	//go:embed entrypoint-queues-joined.sh.tmpl
	queuesJoinedText string
	//go:embed entrypoint-state.sh.tmpl
	stateText string
	//go:embed entrypoint-state-stop.sh.tmpl
	stateStopText string
	//go:embed entrypoint-state-joined.sh.tmpl
	stateJoinedText string
	//go:embed entrypoint-state-follower.sh.tmpl
	stateFollowerText string
	//go:embed entrypoint-classify.sh.tmpl
	classifyText string
	//go:embed entrypoint-ending.sh.tmpl
	endingText string
	//go:embed entrypoint-owner.sh.tmpl
	ownerText string
)

// values maps the placeholders of one template to their text.
type values map[string]string

// quoter quotes the values of one script with shWord and keeps the first
// value it refused, so that a render lists its values and checks for an
// error once.
type quoter struct {
	err error
}

// one returns v (a string or an int) quoted; name says which value was
// refused, if it is.
func (q *quoter) one(name string, v any) string {
	s, err := shWord(v)
	if err != nil && q.err == nil {
		q.err = fmt.Errorf("%s: %w", name, err)
	}
	return s
}

// all quotes each value for the placeholder its key names, in name order.
func (q *quoter) all(raw map[string]any) values {
	vals := make(values, len(raw))
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		vals[name] = q.one(name, raw[name])
	}
	return vals
}

// fill replaces every {{name}} of the template text with vals[name]. A
// placeholder with no value, or a value with no placeholder, is an error:
// the templates and Generate must stay in step. Values are not scanned for
// placeholders, so user input cannot add one.
func fill(file, text string, vals values) (string, error) {
	var b strings.Builder
	b.Grow(len(text) + 1024)
	used := make(map[string]bool, len(vals))
	for {
		i := strings.Index(text, "{{")
		if i < 0 {
			break
		}
		n := strings.Index(text[i:], "}}")
		if n < 0 {
			return "", fmt.Errorf("fluxfiles: %s: a {{ is not closed", file)
		}
		name := text[i+2 : i+n]
		v, ok := vals[name]
		if !ok {
			return "", fmt.Errorf("fluxfiles: %s: no value for {{%s}}", file, name)
		}
		used[name] = true
		b.WriteString(text[:i])
		b.WriteString(v)
		text = text[i+n+2:]
	}
	b.WriteString(text)
	for name := range vals {
		if !used[name] {
			return "", fmt.Errorf("fluxfiles: %s: no placeholder {{%s}}", file, name)
		}
	}
	return b.String(), nil
}

// shWord turns a string into one bash
// word that expands to exactly that string, by single-quoting it: inside
// single quotes nothing is special but the quote itself, which is written
// by closing the quotes, adding an escaped quote and reopening them.
// Ints are printed in decimal, which needs no quoting.
func shWord(v any) (string, error) {
	switch v := v.(type) {
	case int:
		return strconv.Itoa(v), nil
	case string:
		// bash strings cannot hold NUL: the word would be silently cut.
		if strings.IndexByte(v, 0) >= 0 {
			return "", fmt.Errorf("sh: %q contains a NUL byte", v)
		}
		return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'", nil
	default:
		return "", fmt.Errorf("sh: cannot quote a %T", v)
	}
}
