package modelserver

import "strings"

// LastUserText returns the text of the last user message of a model request
// that has any text, its text parts joined by newlines: what the client sent
// as the user's prompt (tool results are not text and are skipped). It reads
// each protocol's shape: Anthropic messages[].content, Responses input[]
// (a string input counts as one user message), Chat Completions
// messages[].content, Gemini contents[].parts. "" when there is none.
func (r Request) LastUserText() string {
	var msgs []any
	switch r.Protocol {
	case Anthropic, ChatComp:
		msgs, _ = r.JSON["messages"].([]any)
	case Responses:
		if s, ok := r.JSON["input"].(string); ok {
			return s
		}
		msgs, _ = r.JSON["input"].([]any)
	case Gemini:
		msgs, _ = r.JSON["contents"].([]any)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if role, _ := m["role"].(string); role != "user" {
			continue
		}
		var parts []any
		switch c := m["content"].(type) {
		case string:
			if c != "" {
				return c
			}
			continue
		case []any:
			parts = c
		}
		if p, ok := m["parts"].([]any); ok {
			parts = p
		}
		var texts []string
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			typ, _ := pm["type"].(string)
			if typ != "" && typ != "text" && typ != "input_text" {
				continue
			}
			if t, _ := pm["text"].(string); t != "" {
				texts = append(texts, t)
			}
		}
		if len(texts) > 0 {
			return strings.Join(texts, "\n")
		}
	}
	return ""
}
