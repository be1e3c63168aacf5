package settings

import (
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
)

// checkPMI warns when run-options choose the job shell's PMIx server
// (flux-pmix) without its simple PMI server: pmi=pmix replaces flux-core's
// default pmi=simple, so MPICH (and Intel MPI), which only speak simple
// PMI, start every task as a singleton of size 1, each running the whole
// problem, and nothing fails. pmi=simple,pmix serves both kinds of MPI.
func checkPMI(s *Settings) finding.List {
	var found finding.List
	servers, ok := pmiServers(s.RunOptions)
	if !ok || !slices.Contains(servers, "pmix") || slices.Contains(servers, "simple") {
		return found
	}
	found.Warnf(s.Origin("run-options"),
		"run-options set %s, which switches off Flux's simple PMI: MPICH and Intel MPI jobs then start every task as a singleton of size 1; write -o pmi=%s to serve PMIx (Open MPI 5) and simple PMI (MPICH, Open MPI 4) at once",
		finding.Quote("pmi="+strings.Join(servers, ",")), strings.Join(append([]string{"simple"}, servers...), ","))
	return found
}

// pmiServers returns the servers of the last pmi shell option in words
// (flux run keeps the last value of an option given twice) and whether
// words set one. Words are run-options as parseRunOptions accepted them:
// -o VALUE, -oVALUE, -o=VALUE, bundled flags ending in o (-vo VALUE),
// --setopt VALUE and --setopt=VALUE.
func pmiServers(words []string) ([]string, bool) {
	var last string
	found := false
	for i := 0; i < len(words); i++ {
		value, next := setoptValue(words, i)
		if next {
			i++
		}
		if key, servers, ok := strings.Cut(value, "="); ok && key == "pmi" {
			last, found = servers, true
		}
	}
	if !found {
		return nil, false
	}
	return strings.Split(last, ","), true
}

// setoptValue returns the value of the -o/--setopt option at words[i]
// ("" if that word is not one) and whether the value is the next word.
func setoptValue(words []string, i int) (value string, next bool) {
	w := words[i]
	if name, v, ok := strings.Cut(w, "="); ok && name == "--setopt" {
		return v, false
	}
	if w == "--setopt" {
		return nextWord(words, i), true
	}
	if strings.HasPrefix(w, "--") || !strings.HasPrefix(w, "-") {
		return "", false
	}
	// Bundled short options: the first one that takes a value takes the
	// rest of the word, or the next word.
	for j := 1; j < len(w); j++ {
		opt := shortOption(w[j])
		if opt == nil || !opt.takesValue {
			continue
		}
		rest := strings.TrimPrefix(w[j+1:], "=")
		switch {
		case opt.short != 'o':
			return "", rest == ""
		case rest == "":
			return nextWord(words, i), true
		default:
			return rest, false
		}
	}
	return "", false
}

// shortOption is the accepted run option with the short name c, or nil.
func shortOption(c byte) *runOption {
	for j := range runOptions {
		if runOptions[j].short == c {
			return &runOptions[j]
		}
	}
	return nil
}

func nextWord(words []string, i int) string {
	if i+1 < len(words) {
		return words[i+1]
	}
	return ""
}
