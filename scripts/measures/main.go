// Command measures prints the design's measures of the code (the Endpoint
// port's issue): long functions, the widest types and back-pointers to a
// use-case type in the domain, real time in the domain, and transport
// checks outside the endpoint registry and parser.
//
//	go run ./scripts/measures        # from the module root
//
// It reads the source with go/parser; it builds nothing and runs nothing.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// longBody is the measure's bound on a function's body, in lines.
const longBody = 80

// realTime are calls that run on the machine's clock, not the service's.
var realTime = []string{"time.Now", "time.Sleep", "time.After", "time.AfterFunc", "time.NewTicker", "time.NewTimer",
	"time.Tick", "time.Since", "time.Until", "context.WithTimeout", "context.WithDeadline", "quartz.NewReal"}

// transportChecks are the tests of which transport a record or id is on,
// written outside the endpoint registry and the id parser.
var transportChecks = []string{"Backend != nil", "Backend == nil", "backendTurn()", "BackendConversationID(", `"cx_`, `"conv_cx`,
	"Kind == Endpoint", "Kind != Endpoint", "case Endpoint"}

// endpointHome are the files allowed to tell transports apart.
var endpointHome = map[string]bool{"domain/endpoint.go": true}

type fileInfo struct {
	path string // relative to the root
	test bool
	f    *ast.File
	src  []byte
}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	files, err := load(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "measures:", err)
		os.Exit(1)
	}
	var m measured
	for _, fi := range files.list {
		m.file(files.fset, fi)
	}
	m.report()
	g, err := domainGraph(files.fset, files.list)
	if err != nil && len(g.files) == 0 {
		fmt.Fprintln(os.Stderr, "measures: the domain's file graph:", err)
		os.Exit(1)
	}
	g.report()
}

// measured is what the files showed.
type measured struct {
	long         []string
	longInDomain int
	methods      map[string]int // domain type → methods declared
	backPointers []string
	realTime     map[string]int // in domain's code
	realTimeTest map[string]int // in domain's tests
	checks       map[string]int // file → transport checks
}

func (m *measured) file(fset *token.FileSet, fi fileInfo) {
	if m.methods == nil {
		m.methods, m.realTime, m.realTimeTest, m.checks = map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	}
	inDomain := strings.HasPrefix(fi.path, "domain/")
	generated := strings.HasSuffix(fi.path, ".gen.go")
	if inDomain {
		into := m.realTime
		if fi.test {
			into = m.realTimeTest
		}
		for _, c := range realTime {
			if n := callsIn(fi.f, c); n > 0 {
				into[c] += n
			}
		}
	}
	if !fi.test && !endpointHome[fi.path] && !generated && !strings.HasPrefix(fi.path, "scripts/measures/") {
		for _, c := range transportChecks {
			if n := strings.Count(string(fi.src), c); n > 0 {
				m.checks[fi.path] += n
			}
		}
	}
	if fi.test || generated {
		return
	}
	for _, d := range fi.f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Body != nil {
				if n := fset.Position(d.Body.Rbrace).Line - fset.Position(d.Body.Lbrace).Line - 1; n > longBody {
					m.long = append(m.long, fmt.Sprintf("%4d  %s %s", n, fi.path, funcName(d)))
					if inDomain {
						m.longInDomain++
					}
				}
			}
			if inDomain && d.Recv != nil && len(d.Recv.List) == 1 {
				m.methods[recvType(d.Recv.List[0].Type)]++
			}
		case *ast.GenDecl:
			if inDomain {
				m.backPointers = append(m.backPointers, embedsService(d)...)
			}
		}
	}
}

// embedsService names the struct types of d that embed Service.
func embedsService(d *ast.GenDecl) []string {
	var out []string
	for _, sp := range d.Specs {
		ts, ok := sp.(*ast.TypeSpec)
		if !ok {
			continue
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			continue
		}
		for _, fld := range st.Fields.List {
			if len(fld.Names) == 0 && recvType(fld.Type) == "Service" {
				out = append(out, ts.Name.Name)
			}
		}
	}
	return out
}

func (m *measured) report() {
	sort.Sort(sort.Reverse(sort.StringSlice(m.long)))
	fmt.Printf("Non-test functions with bodies over %d lines (generated code aside): %d (in domain: %d)\n", longBody, len(m.long), m.longInDomain)
	for _, l := range m.long {
		fmt.Println("  " + l)
	}
	type wide struct {
		name string
		n    int
	}
	var ws []wide
	for name, n := range m.methods {
		ws = append(ws, wide{name, n})
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].n > ws[j].n || ws[i].n == ws[j].n && ws[i].name < ws[j].name })
	fmt.Printf("Domain types with the most methods declared (the measure: none over 60):\n")
	for i := 0; i < len(ws) && i < 5; i++ {
		fmt.Printf("  %4d  %s\n", ws[i].n, ws[i].name)
	}
	sort.Strings(m.backPointers)
	fmt.Printf("Domain types embedding *Service (back-pointers): %d %v\n", len(m.backPointers), m.backPointers)
	fmt.Printf("Real-time calls in domain: %s; in its tests: %s\n", tally(m.realTime), tally(m.realTimeTest))
	fmt.Printf("Transport checks outside the endpoint registry and parser: %s\n", tally(m.checks))
}

// tally is a count's total and its parts, sorted.
func tally(c map[string]int) string {
	total := 0
	var parts []string
	for k, n := range c {
		total += n
		parts = append(parts, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d %v", total, parts)
}

type loaded struct {
	fset *token.FileSet
	list []fileInfo
}

// load parses every Go file of the module under root, skipping vendored
// and generated trees and the tools' own caches.
func load(root string) (loaded, error) {
	out := loaded{fset: token.NewFileSet()}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(out.fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out.list = append(out.list, fileInfo{path: filepath.ToSlash(rel), test: strings.HasSuffix(path, "_test.go"), f: f, src: src})
		return nil
	})
	return out, err
}

// callsIn counts the calls of pkg.Fn (as written: "time.Now") in f.
func callsIn(f *ast.File, name string) int {
	pkg, fn, _ := strings.Cut(name, ".")
	n := 0
	ast.Inspect(f, func(x ast.Node) bool {
		if c, ok := x.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == fn {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == pkg {
					n++
				}
			}
		}
		return true
	})
	return n
}

func funcName(d *ast.FuncDecl) string {
	if d.Recv != nil && len(d.Recv.List) == 1 {
		return recvType(d.Recv.List[0].Type) + "." + d.Name.Name
	}
	return d.Name.Name
}

// recvType is the name of a receiver's or field's type, without * or
// type parameters.
func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvType(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	}
	return ""
}
