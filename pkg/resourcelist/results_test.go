package resourcelist

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Issue 14, point 9: a result on stderr is one line that shows what it
// holds: no rune that starts a line or reorders the text (U+2028, U+2029,
// U+0085, bidi controls, zero-width characters) is written raw, and names,
// paths and messages from the input are cut short (a 1 MB name made a
// 1 MB line).
func TestStderrResultsAreShortVisibleLines(t *testing.T) {
	for _, r := range []rune{'\n', '\r', '\x1b', '\u0085', '\u2028', '\u2029', '\u202e', '\u2066', '\u200b', '\u200f', '\ufeff', '\u061c'} {
		got := OneLine("a" + string(r) + "b")
		if strings.ContainsRune(got, r) || !strings.HasPrefix(got, "a\\") {
			t.Errorf("oneLine(%U) = %q", r, got)
		}
	}
	if got := OneLine("a\xffb"); got != `a\xffb` {
		t.Errorf("invalid UTF-8: %q", got)
	}
	if got := OneLine("naïve 名前 ok"); got != "naïve 名前 ok" {
		t.Errorf("printable text changed: %q", got)
	}
	long := strings.Repeat("n", 1<<20)
	var b bytes.Buffer
	PrintResults(&b, fn.Results{{Severity: fn.Error, Message: long, ResourceRef: &fn.ResourceRef{APIVersion: "v1", Kind: "ConfigMap", Name: long, Namespace: long}, Field: &fn.Field{Path: long}}}, false)
	if b.Len() > 8<<10 || strings.Count(b.String(), "\n") != 1 || !strings.Contains(b.String(), "(1048576 bytes)") {
		t.Errorf("a result of 1 MB parts printed %d bytes: %.200q", b.Len(), b.String())
	}
}
