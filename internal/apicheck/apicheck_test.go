// Package apicheck holds a test that the user-facing packages show no type
// of package engine in their exported API.
package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// allowed names the one place a user-facing package may name engine: the
// client's Store interface embeds the store contract (a program only
// passes a store through, see client.Store).
var allowed = map[string]bool{"client.Store": true}

// TestNoEngineInUserAPI parses client and worker and fails for every
// exported function, method, type, field or value whose declaration names
// a type of package engine.
func TestNoEngineInUserAPI(t *testing.T) {
	for _, dir := range []string{"client", "worker"} {
		fset := token.NewFileSet()
		root := filepath.Join("..", "..", dir)
		entries, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(root, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			engineName := ""
			for _, imp := range f.Imports {
				if strings.Trim(imp.Path.Value, `"`) == "github.com/weirflow/weir/engine" {
					engineName = "engine"
					if imp.Name != nil {
						engineName = imp.Name.Name
					}
				}
			}
			if engineName == "" {
				continue
			}
			for _, d := range f.Decls {
				for _, where := range exported(dir, d) {
					checked++
					if allowed[where.name] {
						continue
					}
					if names := namesPackage(where.node, engineName); names != "" {
						t.Errorf("%s: %s (%s) shows engine.%s to users", fset.Position(where.node.Pos()), where.name, dir, names)
					}
				}
			}
		}
		if checked == 0 {
			t.Errorf("%s: no exported declaration checked; the test reads the wrong files", dir)
		}
	}
}

type decl struct {
	name string
	node ast.Node
}

// exported returns the parts of d a user of package pkg sees: an exported
// function's or method's signature (a method of an exported receiver), an
// exported type (for a struct, its exported fields only; an interface
// whole), and exported values' types.
func exported(pkg string, d ast.Decl) []decl {
	var out []decl
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return nil
		}
		name := pkg + "." + d.Name.Name
		if d.Recv != nil {
			recv := receiverName(d.Recv.List[0].Type)
			if !ast.IsExported(recv) {
				return nil
			}
			name = pkg + "." + recv + "." + d.Name.Name
		}
		out = append(out, decl{name, d.Type})
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if !s.Name.IsExported() {
					continue
				}
				name := pkg + "." + s.Name.Name
				if st, ok := s.Type.(*ast.StructType); ok {
					for _, f := range st.Fields.List {
						for _, n := range f.Names {
							if n.IsExported() {
								out = append(out, decl{name + "." + n.Name, f.Type})
							}
						}
					}
					continue
				}
				out = append(out, decl{name, s.Type})
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() && s.Type != nil {
						out = append(out, decl{pkg + "." + n.Name, s.Type})
					}
				}
			}
		}
	}
	return out
}

func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// namesPackage returns the first name of package pkg that n refers to, or "".
func namesPackage(n ast.Node, pkg string) string {
	found := ""
	ast.Inspect(n, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && found == "" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == pkg {
				found = sel.Sel.Name
			}
		}
		return found == ""
	})
	return found
}
