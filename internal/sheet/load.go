package sheet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Ext is the extension of a sheet's file.
const Ext = ".md"

// Load reads the sheets that paths name: each path is a sheet (a file,
// whatever its extension) or a folder whose ".md" files are sheets (not
// its subfolders). The sheets come sorted by file path, each file once.
// Two sheets of one id are an error naming both files. The references of
// body dependency lines are resolved against the sheets read
// (ResolveBodyDepends). The first error stops the load; warnings say what
// was ignored.
func Load(paths []string) ([]Sheet, []Warning, error) {
	files, err := sheetFiles(paths)
	if err != nil {
		return nil, nil, err
	}
	var (
		sheets []Sheet
		warns  []Warning
		byID   = map[string]string{}
	)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, &Error{File: f, Msg: readError(err)}
		}
		s, w, err := Parse(f, data)
		if err != nil {
			return nil, nil, err
		}
		if other, dup := byID[s.ID]; dup {
			return nil, nil, &Error{File: f, Msg: fmt.Sprintf("the id %q is also the id of %s: ids must differ (set id in the front matter)", s.ID, other)}
		}
		byID[s.ID] = f
		sheets = append(sheets, s)
		warns = append(warns, w...)
	}
	warns = append(warns, ResolveBodyDepends(sheets)...)
	return sheets, warns, nil
}

// sheetFiles lists the files that paths name, sorted, each once.
func sheetFiles(paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, errors.New("no sheet given: name sheet files (.md) or folders of them")
	}
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, &Error{File: p, Msg: readError(err)}
		}
		if !fi.IsDir() {
			files = append(files, filepath.Clean(p))
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, &Error{File: p, Msg: readError(err)}
		}
		n := 0
		for _, e := range entries {
			if strings.EqualFold(filepath.Ext(e.Name()), Ext) && isFile(p, e) {
				files = append(files, filepath.Join(p, e.Name()))
				n++
			}
		}
		if n == 0 {
			return nil, &Error{File: p, Msg: "the folder holds no sheet (*.md)"}
		}
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// isFile reports whether a folder's entry is a regular file, or a link
// to one.
func isFile(dir string, e fs.DirEntry) bool {
	if e.Type().IsRegular() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	fi, err := os.Stat(filepath.Join(dir, e.Name()))
	return err == nil && fi.Mode().IsRegular()
}

// readError says why a file could not be read, without repeating its path.
func readError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "no such file or folder"
	}
	return err.Error()
}

// ResolveBodyDepends maps the references of the sheets' body dependency
// lines (DependsFrom FromBody) to the sheets' ids, and sets Depends to
// those that resolve. A reference resolves to the sheet of that id, else
// to the one sheet whose title carries it (TitleID: the seeds name their
// tasks "# id050 — …" in files named otherwise). A reference that names no
// sheet is dropped with a warning: such lines often name work done before
// the batch ("✅ complété"). A sheet none of whose references resolve has
// no dependency (DependsFrom FromNone) but keeps its BodyRefs. Front-matter
// dependencies are left alone: an unknown one is an error of the DAG.
func ResolveBodyDepends(sheets []Sheet) []Warning {
	ids := map[string]bool{}
	byTitle := map[string][]string{}
	for _, s := range sheets {
		ids[s.ID] = true
		if s.TitleID != "" {
			byTitle[s.TitleID] = append(byTitle[s.TitleID], s.ID)
		}
	}
	var warns []Warning
	for i := range sheets {
		s := &sheets[i]
		if s.DependsFrom != FromBody {
			continue
		}
		s.Depends = nil
		for j := range s.BodyRefs {
			r := &s.BodyRefs[j]
			r.ID = ""
			switch t := byTitle[r.Name]; {
			case ids[r.Name]:
				r.ID = r.Name
			case len(t) == 1:
				r.ID = t[0]
			case len(t) > 1:
				warns = append(warns, Warning{File: s.File, Line: r.Line, Msg: fmt.Sprintf(
					"the dependency `%s` named in the body is the title of several sheets (%s): ignored; set depends in the front matter",
					r.Name, strings.Join(t, ", "))})
				continue
			default:
				warns = append(warns, Warning{File: s.File, Line: r.Line, Msg: fmt.Sprintf(
					"the dependency `%s` named in the body is no sheet of the batch: ignored (set depends in the front matter to require it)", r.Name)})
				continue
			}
			if r.ID != s.ID && !slices.Contains(s.Depends, r.ID) {
				s.Depends = append(s.Depends, r.ID)
			}
		}
		if len(s.Depends) == 0 {
			s.DependsFrom = FromNone
		}
	}
	return warns
}
