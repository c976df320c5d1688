package sheet

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Parse reads one sheet from data; file names it in errors and warnings
// and gives its default id (its base name without the extension).
//
// The front matter is there only when the file's first line is "---".
// Errors are *Error values naming the file, and the line and key when
// there is one: a front matter that does not parse or is not closed, a
// key of the wrong type, an invalid value, an id that is not one. Unknown
// keys are warnings; the keys that editors' prompt files carry (agent,
// mode, tools) are ignored silently.
//
// When the front matter has no depends key, the body's dependency lines
// ("Dépendance : `id050`", "Depends on: `a`, `b`") give BodyRefs and, as
// they are written, Depends (DependsFrom is FromBody): ResolveBodyDepends
// then maps them to the ids of the batch's sheets. "depends: []" says that
// a sheet has no dependency whatever its body says.
func Parse(file string, data []byte) (Sheet, []Warning, error) {
	fm, fmLine, body, bodyLine, err := split(file, data)
	if err != nil {
		return Sheet{}, nil, err
	}
	s := Sheet{File: file}
	var warns []Warning
	if fmLine > 0 {
		d := decoder{file: file, offset: fmLine - 1, s: &s}
		if err := d.decode(fm); err != nil {
			return Sheet{}, nil, err
		}
		warns = d.warns
	}

	text := string(body)
	s.Body = strings.TrimLeft(text, "\r\n")
	h := heading(text)
	s.TitleID = titleID(h)
	if !s.Has(FieldID) {
		s.ID = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		if why := validID(s.ID); why != "" {
			return Sheet{}, nil, &Error{File: file,
				Msg: fmt.Sprintf("the id %q, taken from the file name, %s: set id in the front matter", s.ID, why)}
		}
	}
	switch {
	case s.Has(FieldDescription):
	case h != "":
		s.Title = h
	default:
		s.Title = s.ID
	}
	if !s.Has(FieldDepends) {
		s.BodyRefs = bodyRefs(text, bodyLine)
		for _, r := range s.BodyRefs {
			s.Depends = append(s.Depends, r.Name)
		}
		if len(s.Depends) > 0 {
			s.DependsFrom = FromBody
		}
	}
	return s, warns, nil
}
