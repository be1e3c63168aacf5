package resourcelist

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// PrintResults writes errors and warnings (and infos when verbose) the
// way kpt prints them: [severity] apiVersion/Kind/[namespace/]name field:
// message. Every part that comes from the input is cut short: a name or
// an annotation key may be a megabyte long.
func PrintResults(w io.Writer, results fn.Results, verbose bool) {
	for _, r := range results {
		if r.Severity == fn.Info && !verbose {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "[%s]", r.Severity)
		if ref := r.ResourceRef; ref != nil {
			b.WriteString(" " + Clip(ref.APIVersion, maxPart) + "/" + Clip(ref.Kind, maxPart) + "/")
			if ref.Namespace != "" {
				b.WriteString(Clip(ref.Namespace, maxPart) + "/")
			}
			b.WriteString(Clip(ref.Name, maxPart))
		}
		if r.Field != nil && r.Field.Path != "" {
			b.WriteString(" " + Clip(r.Field.Path, maxPart))
		}
		fmt.Fprintf(w, "%s\n", OneLine(b.String()+": "+Clip(r.Message, MaxLine)))
	}
}

// Lengths of what PrintResults shows of one part of a result, and of a
// message (MaxLine: of any line about the input), in bytes.
const (
	maxPart = 256
	MaxLine = 4096
)

// Clip cuts s to at most n bytes (on a rune boundary), saying how long it
// was.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s...(%d bytes)", s[:cut], len(s))
}

// OneLine keeps a result on one line that reads as it is stored: user
// text in a name, a path (an annotation key) or a message must not be able
// to start a line of its own, which could pass for another result, nor
// reorder what a terminal shows. Every rune that is not printable (C0 and
// C1 controls, the line and paragraph separators U+2028 and U+2029, bidi
// controls such as U+202E, zero-width and other format characters, and
// invalid UTF-8) is written as a Go escape.
func OneLine(s string) string {
	if !strings.ContainsFunc(s, hidden) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case hidden(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hidden(r rune) bool { return r != ' ' && !unicode.IsPrint(r) }
