package detect

import (
	"cmp"
	"go/ast"
	"go/constant"
	"go/parser"
	gotoken "go/token"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// The Go rule of same-fix compares a Go file at two trees declaration by
// declaration: the declarations whose text differs (the functions a change
// touches) are parsed (go/parser) and written in a canonical form, which
// must be equal:
//   - comments, layout and parentheses are not part of it (the tree is);
//   - the locals of a function (receiver, parameters, results, variables,
//     labels, those of its function literals) are renamed by first use;
//   - the operands of + * == != && || & | ^ are ordered canonically, chains
//     of one associative operator as one list ("a + b + c"); those of a "+"
//     only when one of them is known to be a number (a number literal, a
//     local declared as or from a number, len...: without types, two
//     strings joined in another order are another string), and those of &&
//     and || only when none could panic or act (a call, an index, a
//     selector, a dereference): "p != nil && p.x > 0" guards what
//     "p.x > 0 && p != nil" does not;
//   - calls are not moved past each other, except those of the standard
//     library that only compute (strings, strconv, math, fmt.Sprintf...);
//   - a > b is b < a, a >= b is b <= a; x++ and x += 1 are x = x + 1;
//     var x = v is x := v;
//   - the statements of a block are ordered canonically where they do not
//     depend on each other: two statements are kept in their order when one
//     writes a variable the other reads or writes, when both touch memory
//     through a pointer, an index, a field or a package variable and one of
//     them writes it (a call writes it), and around any statement other than
//     an assignment, a declaration, an increment or a call (if, for, return,
//     defer...);
//   - literals are kept, by value: 0x10 is 16, `a` is "a".
//
// Declarations are matched by name (a function by its receiver's type and
// its name), so a function moved within the file is the same function;
// imports compare as a set.

// goFile is the declarations of one Go file: source text and node, by key.
type goFile struct {
	fset  *gotoken.FileSet
	src   []byte
	decls map[string][]ast.Decl
}

// parseGoFile parses src; nil src is an absent file (no declarations).
func parseGoFile(name string, src []byte) (*goFile, error) {
	g := &goFile{fset: gotoken.NewFileSet(), src: src, decls: map[string][]ast.Decl{}}
	if src == nil {
		return g, nil
	}
	f, err := parser.ParseFile(g.fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	for _, d := range f.Decls {
		k := declKey(d)
		g.decls[k] = append(g.decls[k], d)
	}
	g.decls["package "+f.Name.Name] = []ast.Decl{}
	return g, nil
}

// declKey names a declaration: "func Name", "func (T) Name", "import",
// "type T", "var a,b", "const x".
func declKey(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) > 0 {
			t := d.Recv.List[0].Type
			for {
				switch x := t.(type) {
				case *ast.StarExpr:
					t = x.X
					continue
				case *ast.IndexExpr:
					t = x.X
					continue
				case *ast.IndexListExpr:
					t = x.X
					continue
				case *ast.ParenExpr:
					t = x.X
					continue
				}
				break
			}
			if id, ok := t.(*ast.Ident); ok {
				return "func (" + id.Name + ") " + d.Name.Name
			}
		}
		return "func " + d.Name.Name
	case *ast.GenDecl:
		if d.Tok == gotoken.IMPORT {
			return "import"
		}
		var names []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			}
		}
		return d.Tok.String() + " " + strings.Join(names, ",")
	}
	return "bad"
}

// text is the source of node n.
func (g *goFile) text(n ast.Node) string {
	f := g.fset.File(n.Pos())
	if f == nil {
		return ""
	}
	return string(g.src[f.Offset(n.Pos()):f.Offset(n.End())])
}

// goCompare compares one Go file at two trees (nil: absent there). ok is
// false when either does not parse; then same is meaningless. touched are
// the declarations whose text differs, and normalised says they are equal
// once written in canonical form.
func goCompare(name string, a, b []byte) (same bool, touched []string, ok bool) {
	fa, err := parseGoFile(name, a)
	if err != nil {
		return false, nil, false
	}
	fb, err := parseGoFile(name, b)
	if err != nil {
		return false, nil, false
	}
	keys := map[string]bool{}
	for k := range fa.decls {
		keys[k] = true
	}
	for k := range fb.decls {
		keys[k] = true
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	}) {
		da, ina := fa.decls[k]
		db, inb := fb.decls[k]
		if ina != inb {
			return false, append(touched, k), true
		}
		if len(da) != len(db) {
			return false, append(touched, k), true
		}
		ta, tb := make([]string, len(da)), make([]string, len(db))
		for i := range da {
			ta[i], tb[i] = fa.text(da[i]), fb.text(db[i])
		}
		if slices.Equal(ta, tb) {
			continue
		}
		touched = append(touched, k)
		ca, cb := make([]string, len(da)), make([]string, len(db))
		for i := range da {
			ca[i], cb[i] = canonicalDecl(da[i]), canonicalDecl(db[i])
		}
		slices.Sort(ca)
		slices.Sort(cb)
		if !slices.Equal(ca, cb) {
			return false, touched, true
		}
	}
	return true, touched, true
}

// canonicalDecl writes a declaration in canonical form.
func canonicalDecl(d ast.Decl) string {
	if g, ok := d.(*ast.GenDecl); ok && g.Tok == gotoken.IMPORT {
		var s []string
		for _, sp := range g.Specs {
			is := sp.(*ast.ImportSpec)
			n := ""
			if is.Name != nil {
				n = is.Name.Name
			}
			s = append(s, n+" "+is.Path.Value)
		}
		slices.Sort(s)
		return strings.Join(s, ";")
	}
	c := &canon{locals: map[string]bool{}, escaping: map[string]bool{}, numbers: map[string]bool{}, numElems: map[string]bool{}}
	if fd, ok := d.(*ast.FuncDecl); ok {
		c.collect(fd)
	}
	if len(c.locals) == 0 {
		return c.node(d)
	}
	// First with every local masked: the order of statements and operands
	// does not depend on their names; then the locals are renamed in the
	// order they first appear in that output, and the result ordered again.
	c.mask = true
	first := c.node(d)
	c.mask = false
	c.rename = map[string]string{}
	for i := 0; i < len(first); i++ {
		if first[i] != '\x02' {
			continue
		}
		j := strings.IndexByte(first[i:], '\x03')
		name := first[i+1 : i+j]
		if _, ok := c.rename[name]; !ok {
			c.rename[name] = "·" + strconv.Itoa(len(c.rename)+1)
		}
		i += j
	}
	return c.node(d)
}

// canon writes Go syntax in canonical form.
type canon struct {
	locals, escaping map[string]bool
	// numbers are the locals known to hold numbers, numElems those that
	// hold slices, arrays or maps of numbers (by their declarations).
	numbers, numElems map[string]bool
	// mask: locals are written \x02name\x03 and compared as one mark;
	// otherwise they are written as rename says.
	mask   bool
	rename map[string]string
}

// collect finds the locals of a function, and those that escape (their
// address taken, or used in a function literal).
func (c *canon) collect(fd *ast.FuncDecl) {
	typed := func(id *ast.Ident, t ast.Expr) {
		if id == nil || t == nil {
			return
		}
		c.numbers[id.Name] = c.numbers[id.Name] || numberType(t)
		c.numElems[id.Name] = c.numElems[id.Name] || elemNumbers(t)
	}
	addFields := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, f := range fl.List {
			for _, n := range f.Names {
				c.local(n)
				typed(n, f.Type)
			}
		}
	}
	addFields(fd.Recv)
	addFields(fd.Type.Params)
	addFields(fd.Type.Results)
	if fd.Body == nil {
		return
	}
	var lits []*ast.FuncLit
	var defined [][2]ast.Node // a local and the value it is declared with
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			addFields(n.Type.Params)
			addFields(n.Type.Results)
			lits = append(lits, n)
		case *ast.AssignStmt:
			if n.Tok == gotoken.DEFINE {
				for i, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						c.local(id)
						if len(n.Rhs) == len(n.Lhs) {
							defined = append(defined, [2]ast.Node{id, n.Rhs[i]})
						}
					}
				}
			}
		case *ast.RangeStmt:
			if n.Tok == gotoken.DEFINE {
				for _, l := range []ast.Expr{n.Key, n.Value} {
					if id, ok := l.(*ast.Ident); ok {
						c.local(id)
					}
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				c.local(id)
				typed(id, n.Type)
				if n.Type == nil && len(n.Values) == len(n.Names) {
					defined = append(defined, [2]ast.Node{id, n.Values[i]})
				}
			}
		case *ast.TypeSpec:
			c.local(n.Name)
		case *ast.LabeledStmt:
			c.local(n.Label)
		case *ast.UnaryExpr:
			if n.Op == gotoken.AND {
				if id, ok := ast.Unparen(n.X).(*ast.Ident); ok {
					c.escaping[id.Name] = true
				}
			}
		}
		return true
	})
	// Locals declared from numbers hold numbers (in declaration order,
	// once: x := 0; y := x + 1).
	for _, d := range defined {
		id := d[0].(*ast.Ident)
		if c.numeric(d[1].(ast.Expr)) {
			c.numbers[id.Name] = true
		}
	}
	for _, l := range lits {
		ast.Inspect(l.Body, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				c.escaping[id.Name] = true
			}
			return true
		})
	}
}

func (c *canon) local(id *ast.Ident) {
	if id != nil && id.Name != "_" {
		c.locals[id.Name] = true
	}
}

// ident writes a name that may be a local.
func (c *canon) ident(name string) string {
	if !c.locals[name] {
		return name
	}
	if c.mask {
		return "\x02" + name + "\x03"
	}
	if r, ok := c.rename[name]; ok {
		return r
	}
	return name
}

// key is what s sorts by: with locals masked, their names do not count.
func (c *canon) key(s string) string {
	if !c.mask || strings.IndexByte(s, '\x02') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\x02' {
			j := strings.IndexByte(s[i:], '\x03')
			b.WriteString("\x02\x03")
			i += j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

var (
	posType     = reflect.TypeFor[gotoken.Pos]()
	tokenType   = reflect.TypeFor[gotoken.Token]()
	commentType = reflect.TypeFor[*ast.CommentGroup]()
	objectType  = reflect.TypeFor[*ast.Object]()
	scopeType   = reflect.TypeFor[*ast.Scope]()
)

// node writes any syntax node.
func (c *canon) node(n ast.Node) string {
	switch n := n.(type) {
	case nil:
		return "nil"
	case *ast.Ident:
		if n == nil {
			return "nil"
		}
		return c.ident(n.Name)
	case *ast.BasicLit:
		return literal(n)
	case *ast.ParenExpr:
		return c.node(n.X)
	case *ast.BinaryExpr:
		return c.binary(n.Op, n.X, n.Y)
	case *ast.SelectorExpr:
		return "(. " + c.node(n.X) + " " + n.Sel.Name + ")"
	case *ast.CompositeLit:
		var b strings.Builder
		b.WriteString("(lit " + c.node(n.Type))
		for _, e := range n.Elts {
			b.WriteByte(' ')
			if kv, ok := e.(*ast.KeyValueExpr); ok {
				if id, ok := kv.Key.(*ast.Ident); ok {
					b.WriteString("(: " + id.Name + " " + c.node(kv.Value) + ")") // a field name
					continue
				}
			}
			b.WriteString(c.node(e))
		}
		return b.String() + ")"
	case *ast.StructType:
		var b strings.Builder
		b.WriteString("(struct")
		for _, f := range n.Fields.List {
			b.WriteString(" (")
			for _, id := range f.Names {
				b.WriteString(id.Name + " ")
			}
			b.WriteString(c.node(f.Type))
			if f.Tag != nil {
				b.WriteString(" " + literal(f.Tag))
			}
			b.WriteByte(')')
		}
		return b.String() + ")"
	case *ast.InterfaceType:
		var b strings.Builder
		b.WriteString("(interface")
		for _, f := range n.Methods.List {
			b.WriteString(" (")
			for _, id := range f.Names {
				b.WriteString(id.Name + " ")
			}
			b.WriteString(c.node(f.Type) + ")")
		}
		return b.String() + ")"
	case *ast.FuncDecl:
		recv := "nil"
		if n.Recv != nil {
			recv = c.node(n.Recv)
		}
		body := "nil"
		if n.Body != nil {
			body = c.node(n.Body)
		}
		return "(func " + recv + " " + n.Name.Name + " " + c.node(n.Type) + " " + body + ")"
	case *ast.IncDecStmt:
		op := gotoken.ADD
		if n.Tok == gotoken.DEC {
			op = gotoken.SUB
		}
		return "(= [" + c.node(n.X) + "] [" + c.binary(op, n.X, &ast.BasicLit{Kind: gotoken.INT, Value: "1"}) + "])"
	case *ast.AssignStmt:
		if op, ok := opOfAssign[n.Tok]; ok && len(n.Lhs) == 1 && len(n.Rhs) == 1 {
			return "(= [" + c.node(n.Lhs[0]) + "] [" + c.binary(op, n.Lhs[0], n.Rhs[0]) + "])"
		}
		return "(" + n.Tok.String() + " " + c.list(n.Lhs) + " " + c.list(n.Rhs) + ")"
	case *ast.CallExpr:
		dots := ""
		if n.Ellipsis.IsValid() {
			dots = "..."
		}
		return "(call " + c.node(n.Fun) + " " + c.list(n.Args) + dots + ")"
	case *ast.DeclStmt:
		if g, ok := n.Decl.(*ast.GenDecl); ok && g.Tok == gotoken.VAR && len(g.Specs) == 1 {
			if vs := g.Specs[0].(*ast.ValueSpec); vs.Type == nil && len(vs.Values) == len(vs.Names) {
				names := make([]ast.Expr, len(vs.Names))
				for i, id := range vs.Names {
					names[i] = id
				}
				return "(:= " + c.list(names) + " " + c.list(vs.Values) + ")"
			}
		}
	case *ast.BlockStmt:
		return "(block " + c.stmts(n.List) + ")"
	case *ast.CaseClause:
		return "(case " + c.list(n.List) + " " + c.stmts(n.Body) + ")"
	case *ast.CommClause:
		comm := "nil"
		if n.Comm != nil {
			comm = c.node(n.Comm)
		}
		return "(comm " + comm + " " + c.stmts(n.Body) + ")"
	}
	return c.generic(reflect.ValueOf(n))
}

var opOfAssign = map[gotoken.Token]gotoken.Token{
	gotoken.ADD_ASSIGN: gotoken.ADD, gotoken.SUB_ASSIGN: gotoken.SUB, gotoken.MUL_ASSIGN: gotoken.MUL, gotoken.QUO_ASSIGN: gotoken.QUO,
	gotoken.REM_ASSIGN: gotoken.REM, gotoken.AND_ASSIGN: gotoken.AND, gotoken.OR_ASSIGN: gotoken.OR, gotoken.XOR_ASSIGN: gotoken.XOR,
	gotoken.SHL_ASSIGN: gotoken.SHL, gotoken.SHR_ASSIGN: gotoken.SHR, gotoken.AND_NOT_ASSIGN: gotoken.AND_NOT,
}

func (c *canon) list(es []ast.Expr) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = c.node(e)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// generic writes a node by reflection: its type and fields, without
// positions, comments or resolution objects.
func (c *canon) generic(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Invalid:
		return "nil"
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "nil"
		}
		if n, ok := v.Interface().(ast.Node); ok && v.Kind() == reflect.Interface {
			return c.node(n)
		}
		if v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
			if n, ok := v.Interface().(ast.Node); ok {
				if _, special := n.(*ast.Ident); special {
					return c.node(n)
				}
			}
			return c.structOf(v.Elem())
		}
		return c.generic(v.Elem())
	case reflect.Slice:
		s := make([]string, v.Len())
		for i := range v.Len() {
			e := v.Index(i)
			if n, ok := e.Interface().(ast.Node); ok {
				s[i] = c.node(n)
			} else {
				s[i] = c.generic(e)
			}
		}
		return "[" + strings.Join(s, " ") + "]"
	case reflect.Struct:
		return c.structOf(v)
	case reflect.String:
		return strconv.Quote(v.String())
	case reflect.Bool:
		if v.Bool() {
			return "t"
		}
		return "f"
	case reflect.Int, reflect.Int64, reflect.Int32:
		if v.Type() == tokenType {
			return gotoken.Token(v.Int()).String()
		}
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		return strconv.FormatUint(v.Uint(), 10)
	}
	return "?"
}

func (c *canon) structOf(v reflect.Value) string {
	t := v.Type()
	var b strings.Builder
	b.WriteString("(" + t.Name())
	for i := range t.NumField() {
		ft := t.Field(i).Type
		if ft == posType || ft == commentType || ft == objectType || ft == scopeType {
			continue
		}
		f := v.Field(i)
		b.WriteByte(' ')
		if ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Interface {
			if f.IsNil() {
				b.WriteString("nil")
				continue
			}
			if n, ok := f.Interface().(ast.Node); ok {
				b.WriteString(c.node(n))
				continue
			}
		}
		b.WriteString(c.generic(f))
	}
	return b.String() + ")"
}

// literal writes a literal by its value.
func literal(l *ast.BasicLit) string {
	if l.Kind == gotoken.STRING {
		if s, err := strconv.Unquote(l.Value); err == nil {
			return strconv.Quote(s)
		}
		return l.Value
	}
	v := constant.MakeFromLiteral(l.Value, l.Kind, 0)
	if v.Kind() == constant.Unknown {
		return l.Kind.String() + ":" + l.Value
	}
	return l.Kind.String() + ":" + v.ExactString()
}

// commutative and associative operators.
var (
	commutativeOp = map[gotoken.Token]bool{gotoken.ADD: true, gotoken.MUL: true, gotoken.EQL: true, gotoken.NEQ: true,
		gotoken.LAND: true, gotoken.LOR: true, gotoken.AND: true, gotoken.OR: true, gotoken.XOR: true}
	associativeOp = map[gotoken.Token]bool{gotoken.ADD: true, gotoken.MUL: true, gotoken.LAND: true, gotoken.LOR: true,
		gotoken.AND: true, gotoken.OR: true, gotoken.XOR: true}
)

// binary writes x op y in canonical form.
func (c *canon) binary(op gotoken.Token, x, y ast.Expr) string {
	switch op {
	case gotoken.GTR:
		op, x, y = gotoken.LSS, y, x
	case gotoken.GEQ:
		op, x, y = gotoken.LEQ, y, x
	}
	if !commutativeOp[op] {
		return "(" + op.String() + " " + c.node(x) + " " + c.node(y) + ")"
	}
	var operands []ast.Expr
	if associativeOp[op] {
		operands = flatten(op, x, nil)
		operands = flatten(op, y, operands)
	} else {
		operands = []ast.Expr{x, y}
	}
	s := make([]string, len(operands))
	for i, e := range operands {
		s[i] = c.node(e)
	}
	return c.binaryOf(op, s, operands)
}

// binaryOf writes op over operands (written already; the expressions, when
// known, say whether they may be ordered).
func (c *canon) binaryOf(op gotoken.Token, s []string, operands []ast.Expr) string {
	order := true
	numeric := false
	for _, e := range operands {
		switch {
		case op == gotoken.ADD && isStringLit(e):
			order = false // a concatenation
		case (op == gotoken.LAND || op == gotoken.LOR) && !guardFree(e):
			order = false
		}
		numeric = numeric || c.numeric(e)
	}
	if op == gotoken.ADD && operands != nil && !numeric {
		order = false // strings, as far as can be told
	}
	if order {
		s = slices.Clone(s)
		slices.SortStableFunc(s, func(a, b string) int { return cmp.Compare(c.key(a), c.key(b)) })
	}
	return "(" + op.String() + " " + strings.Join(s, " ") + ")"
}

// flatten appends the operands of a chain of op.
func flatten(op gotoken.Token, e ast.Expr, out []ast.Expr) []ast.Expr {
	e = ast.Unparen(e)
	if b, ok := e.(*ast.BinaryExpr); ok && b.Op == op {
		out = flatten(op, b.X, out)
		return flatten(op, b.Y, out)
	}
	return append(out, e)
}

// numeric reports an expression known to be a number: a number literal,
// a local declared with a number type or from a number, an element of a
// local slice, array or map of numbers, len and cap, a conversion to a
// number type, arithmetic over one of those.
func (c *canon) numeric(e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		return e.Kind != gotoken.STRING
	case *ast.Ident:
		return c.numbers[e.Name] && c.locals[e.Name]
	case *ast.IndexExpr:
		id, ok := ast.Unparen(e.X).(*ast.Ident)
		return ok && c.numElems[id.Name] && c.locals[id.Name]
	case *ast.CallExpr:
		if id, ok := e.Fun.(*ast.Ident); ok && !c.locals[id.Name] {
			return id.Name == "len" || id.Name == "cap" || numberType(id)
		}
	case *ast.UnaryExpr:
		return (e.Op == gotoken.SUB || e.Op == gotoken.ADD || e.Op == gotoken.XOR) && c.numeric(e.X)
	case *ast.BinaryExpr:
		switch e.Op {
		case gotoken.SUB, gotoken.MUL, gotoken.QUO, gotoken.REM, gotoken.SHL, gotoken.SHR, gotoken.AND_NOT:
			return true
		case gotoken.ADD:
			return c.numeric(e.X) || c.numeric(e.Y)
		}
	}
	return false
}

// numberType reports the name of a number type.
func numberType(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	if !ok {
		return false
	}
	switch id.Name {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr",
		"float32", "float64", "complex64", "complex128", "byte", "rune":
		return true
	}
	return false
}

// elemNumbers reports a slice, array or map type of numbers.
func elemNumbers(e ast.Expr) bool {
	switch t := e.(type) {
	case *ast.ArrayType:
		return numberType(t.Elt)
	case *ast.MapType:
		return numberType(t.Value)
	}
	return false
}

func isStringLit(e ast.Expr) bool {
	l, ok := ast.Unparen(e).(*ast.BasicLit)
	return ok && l.Kind == gotoken.STRING
}

// guardFree reports an operand of && or || that can neither panic nor act:
// names, literals, and operators over them (len and cap of them too).
func guardFree(e ast.Expr) bool {
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if id, isID := n.Fun.(*ast.Ident); isID && (id.Name == "len" || id.Name == "cap") {
				return true
			}
			ok = false
		case *ast.IndexExpr, *ast.IndexListExpr, *ast.SliceExpr, *ast.StarExpr, *ast.SelectorExpr,
			*ast.TypeAssertExpr, *ast.FuncLit:
			ok = false
		case *ast.UnaryExpr:
			if n.Op == gotoken.ARROW {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// maxOrdered bounds the statements of a block that are ordered.
const maxOrdered = 256

// stmts writes a block's statements, those that do not depend on each
// other in canonical order.
func (c *canon) stmts(list []ast.Stmt) string {
	var kept []ast.Stmt
	for _, s := range list {
		if _, empty := s.(*ast.EmptyStmt); !empty {
			kept = append(kept, s)
		}
	}
	s := make([]string, len(kept))
	for i, st := range kept {
		s[i] = c.node(st)
	}
	if len(kept) < 2 || len(kept) > maxOrdered {
		return "[" + strings.Join(s, " ") + "]"
	}
	effs := make([]effects, len(kept))
	for i, st := range kept {
		effs[i] = c.effectsOf(st)
	}
	// after[j] counts the statements before j that j must follow.
	n := len(kept)
	after := make([]int, n)
	conflict := make([][]bool, n)
	for i := range n {
		conflict[i] = make([]bool, n)
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			if effs[i].conflicts(effs[j]) {
				conflict[i][j] = true
				after[j]++
			}
		}
	}
	keys := make([]string, n)
	for i := range s {
		keys[i] = c.key(s[i])
	}
	done := make([]bool, n)
	out := make([]string, 0, n)
	for range n {
		best := -1
		for i := range n {
			if done[i] || after[i] > 0 {
				continue
			}
			if best < 0 || keys[i] < keys[best] {
				best = i
			}
		}
		done[best] = true
		out = append(out, s[best])
		for j := best + 1; j < n; j++ {
			if conflict[best][j] {
				after[j]--
			}
		}
	}
	return "[" + strings.Join(out, " ") + "]"
}

// effects are what a statement reads and writes: locals by name, and
// memory (through pointers, indexes, fields, package variables, calls).
type effects struct {
	r, w         map[string]bool
	heapR, heapW bool
	barrier      bool // no statement moves across it
}

func (e effects) conflicts(o effects) bool {
	if e.barrier || o.barrier || e.heapW && (o.heapR || o.heapW) || o.heapW && e.heapR {
		return true
	}
	for k := range e.w {
		if o.r[k] || o.w[k] {
			return true
		}
	}
	for k := range o.w {
		if e.r[k] {
			return true
		}
	}
	return false
}

// pure are the builtins and conversions that neither act nor write.
var pure = setOf([]string{"len", "cap", "min", "max", "complex", "real", "imag", "new", "make",
	"int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr",
	"float32", "float64", "complex64", "complex128", "string", "byte", "rune", "bool", "any"})

// purePackages are the standard packages whose functions only compute
// (their arguments aside), and pureFuncs such functions of other packages.
var (
	purePackages = setOf([]string{"strings", "strconv", "math", "unicode", "utf8", "utf16", "path", "bits", "cmplx"})
	pureFuncs    = setOf([]string{"fmt.Sprint", "fmt.Sprintf", "fmt.Sprintln", "fmt.Errorf", "errors.New", "errors.Is",
		"errors.As", "errors.Unwrap", "errors.Join", "slices.Contains", "slices.Index", "slices.Equal", "slices.Max",
		"slices.Min", "bytes.Equal", "bytes.HasPrefix", "bytes.HasSuffix", "bytes.Contains", "filepath.Join",
		"filepath.Base", "filepath.Dir", "filepath.Ext", "filepath.Clean"})
)

// pureCall reports a call that only computes: a builtin or conversion of
// pure, or a function of the standard library that only computes.
func (c *canon) pureCall(call *ast.CallExpr) bool {
	switch f := call.Fun.(type) {
	case *ast.Ident:
		return pure[f.Name] && !c.locals[f.Name]
	case *ast.SelectorExpr:
		pkg, ok := f.X.(*ast.Ident)
		if !ok || c.locals[pkg.Name] {
			return false
		}
		if purePackages[pkg.Name] {
			// not the few that act: a Builder's or Reader's methods are
			// no package functions, and these return new values
			return true
		}
		return pureFuncs[pkg.Name+"."+f.Sel.Name]
	}
	return false
}

func (c *canon) effectsOf(s ast.Stmt) effects {
	e := effects{r: map[string]bool{}, w: map[string]bool{}}
	switch s := s.(type) {
	case *ast.AssignStmt:
		rw := s.Tok != gotoken.ASSIGN && s.Tok != gotoken.DEFINE
		for _, l := range s.Lhs {
			c.write(l, rw, &e)
		}
		for _, r := range s.Rhs {
			c.read(r, &e)
		}
	case *ast.IncDecStmt:
		c.write(s.X, true, &e)
	case *ast.DeclStmt:
		g, ok := s.Decl.(*ast.GenDecl)
		if !ok || g.Tok == gotoken.TYPE {
			e.barrier = true
			break
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			for _, id := range vs.Names {
				c.write(id, false, &e)
			}
			for _, v := range vs.Values {
				c.read(v, &e)
			}
		}
	case *ast.ExprStmt:
		c.read(s.X, &e)
	case *ast.SendStmt:
		e.heapR, e.heapW = true, true
		c.read(s.Chan, &e)
		c.read(s.Value, &e)
	default:
		e.barrier = true
	}
	return e
}

func (c *canon) plainLocal(name string) bool { return c.locals[name] && !c.escaping[name] }

func (c *canon) write(x ast.Expr, alsoRead bool, e *effects) {
	switch x := ast.Unparen(x).(type) {
	case *ast.Ident:
		switch {
		case x.Name == "_":
		case c.plainLocal(x.Name):
			e.w[x.Name] = true
			if alsoRead {
				e.r[x.Name] = true
			}
		default:
			e.heapW = true
			e.heapR = e.heapR || alsoRead
		}
	default:
		e.heapW = true
		c.read(x, e)
	}
}

func (c *canon) read(x ast.Expr, e *effects) {
	ast.Inspect(x, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			switch {
			case n.Name == "_" || n.Name == "true" || n.Name == "false" || n.Name == "nil" || n.Name == "iota":
			case c.plainLocal(n.Name):
				e.r[n.Name] = true
			default:
				e.heapR = true
			}
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && !c.locals[id.Name] && (purePackages[id.Name] || pureFuncs[id.Name+"."+n.Sel.Name]) {
				return false // a package's function, read as a value
			}
			e.heapR = true
			c.read(n.X, e)
			return false
		case *ast.IndexExpr, *ast.IndexListExpr, *ast.SliceExpr, *ast.StarExpr, *ast.TypeAssertExpr:
			e.heapR = true
		case *ast.CallExpr:
			if c.pureCall(n) {
				for _, a := range n.Args {
					c.read(a, e)
				}
				return false
			}
			e.heapR, e.heapW = true, true
		case *ast.UnaryExpr:
			if n.Op == gotoken.ARROW {
				e.heapR, e.heapW = true, true
			}
		case *ast.FuncLit:
			e.barrier = true
			return false
		case *ast.KeyValueExpr:
			if _, ok := n.Key.(*ast.Ident); ok { // a field name
				c.read(n.Value, e)
				return false
			}
		}
		return true
	})
}
