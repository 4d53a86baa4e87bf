package chat

import (
	"fmt"
	"strings"

	"github.com/ardanlabs/jinja"
)

// maxMacroCalls bounds the macro calls of one rendering. The Jinja library has no bound on
// recursion, and a template whose macro calls itself for ever (a mistake in a model's file)
// would otherwise end the process in a stack overflow, which no recover catches: ten thousand
// nested calls take about 16 MiB of stack, while a template's macros are called a few times a
// message or a tool's parameter.
const maxMacroCalls = 10_000

// macroCalls is the variable whose call guardMacros puts first in every macro.
const macroCalls = "__sluice_macro_call"

// macroBudget is one rendering's count of macro calls, refused past maxMacroCalls.
func macroBudget() jinja.Value {
	n := 0
	return jinja.NewCallable(macroCalls, func([]jinja.Value, map[string]jinja.Value) (jinja.Value, error) {
		if n++; n > maxMacroCalls {
			return jinja.Undefined(), fmt.Errorf("chat: more than %d macro calls", maxMacroCalls)
		}
		return jinja.NewString(""), nil // written where the call stands: nothing
	})
}

// guardMacros puts a call of macroCalls first in the body of each macro of src, as an
// expression that writes nothing: not a statement, which the library's trim_blocks would take
// for a second block to trim after, and trimming the whitespace after it where the macro's
// tag does, so that what the macro writes is unchanged. Comments, expressions and raw blocks
// are passed over; quoted strings inside tags are read as strings.
func guardMacros(src string) string {
	var b strings.Builder
	pos := 0
	for i := 0; i < len(src); {
		switch {
		case strings.HasPrefix(src[i:], "{#"):
			i = after(src, i+2, "#}", false)
		case strings.HasPrefix(src[i:], "{{"):
			i = after(src, i+2, "}}", true)
		case strings.HasPrefix(src[i:], "{%"):
			end := after(src, i+2, "%}", true)
			if end < i+4 || !strings.HasSuffix(src[:end], "%}") {
				i = end // unclosed: the compiler says so
				break
			}
			tag := src[i+2 : end-2]
			switch firstWord(strings.TrimLeft(tag, "-+")) {
			case "raw":
				end = endRaw(src, end)
			case "macro":
				b.WriteString(src[pos:end])
				if tag[len(tag)-1] == '-' {
					// The tag's trimming after it, kept; not before (the library would trim the
					// text before the macro's tag, past it).
					b.WriteString("{{ " + macroCalls + "() -}}")
				} else {
					b.WriteString("{{ " + macroCalls + "() }}")
				}
				pos = end
			}
			i = end
		default:
			i++
		}
	}
	b.WriteString(src[pos:])
	return b.String()
}

// after is the index just past the first close at or after i (len(src) when there is none),
// passing over quoted strings when strs.
func after(src string, i int, close string, strs bool) int {
	for i < len(src) {
		switch c := src[i]; {
		case strings.HasPrefix(src[i:], close):
			return i + len(close)
		case strs && (c == '"' || c == '\''):
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		default:
			i++
		}
	}
	return len(src)
}

// endRaw is the index just past the endraw tag that closes a raw block whose opening tag
// ends at i.
func endRaw(src string, i int) int {
	for i < len(src) {
		j := strings.Index(src[i:], "{%")
		if j < 0 {
			return len(src)
		}
		end := after(src, i+j+2, "%}", true)
		if end >= i+j+4 && strings.HasSuffix(src[:end], "%}") && firstWord(strings.Trim(src[i+j+2:end-2], "-+")) == "endraw" {
			return end
		}
		i = end
	}
	return len(src)
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}
