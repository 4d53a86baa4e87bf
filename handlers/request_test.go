package handlers

import (
	"strings"
	"testing"
)

// TestKeysAreSpeltAsTheirFields: a strict body's keys must be its fields' names exactly, at
// every depth a struct decodes (encoding/json alone takes "MODEL" for model and "ſ" for "s");
// what decodes as raw JSON, a map or anything of the client's own keeps its keys free.
func TestKeysAreSpeltAsTheirFields(t *testing.T) {
	for body, want := range map[string]string{
		`{"model":"m","max_tokens":3,"messages":[{"Role":"user"}],"tools":[{"ANY":1}]}`:                       "",
		` { "mod\u0065l" : "m" , "logit_bias" : { "Anything" : 1 } } `:                                        "",
		`{"model":"m","response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"X":{}}}}}`: "",
		`{"MODEL":"m"}`:                                         "body",
		`{"model":"m","Max_Tokens":3}`:                          "body",
		`{"model":"m","max_toKens":3}`:                          "body",
		`{"model":"m","stream_options":{"INCLUDE_USAGE":true}}`: "body.stream_options",
		`{"model":"m","response_format":{"type":"json_schema","JSON_SCHEMA":{"name":"a"}}}`: "body.response_format",
		`{"model":"m","response_format":{"type":"json_schema","json_schema":{"Name":"a"}}}`: "body.response_format.json_schema",
		`{"model":"m","prompt":"a\"}{\\","N":1}`:                                            "body",
	} {
		var req struct {
			chatRequest
			Prompt *string `json:"prompt"`
		}
		fe := readObject([]byte(body), &req, true)
		switch {
		case want == "" && fe != nil:
			t.Errorf("%s: refused: %+v", body, fe)
		case want != "" && (fe == nil || fe.Field != want || fe.Type != "extra_forbidden"):
			t.Errorf("%s: %+v, want a key refused at %s", body, fe, want)
		case fe != nil && (strings.Contains(fe.Message, "MODEL") || strings.Contains(fe.Message, "Name\"")):
			t.Errorf("%s: the client's key is named: %s", body, fe.Message)
		}
	}
	if fe := readObject([]byte(`{"MODEL":"m"}`), &chatRequest{}, false); fe != nil {
		t.Errorf("a body read leniently (TGI's): %+v", fe)
	}
}
