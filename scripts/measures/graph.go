package main

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/token"
	"go/types"
	"os"
	"sort"
)

// fileGraph is the domain's file graph: an edge from a file to each other
// file declaring something it names (a function, a method, a type, a
// variable, a constant, a field), resolved by the type checker.
type fileGraph struct {
	files []string
	edges map[[2]string]int // (from, to) → references
}

// domainGraph type-checks the domain's non-test files and builds its
// file graph.
func domainGraph(fset *token.FileSet, list []fileInfo) (fileGraph, error) {
	var files []*ast.File
	var names []string
	for _, fi := range list {
		if fi.test || len(fi.path) < 7 || fi.path[:7] != "domain/" || containsSlash(fi.path[7:]) {
			continue
		}
		files = append(files, fi.f)
		names = append(names, fi.path)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	var typeErrs int
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil), Error: func(error) { typeErrs++ }}
	pkg, err := conf.Check("akk/domain", fset, files, info)
	if pkg == nil || typeErrs > 0 {
		return fileGraph{}, fmt.Errorf("%d type errors, the first: %v", typeErrs, err)
	}
	g := fileGraph{files: names, edges: map[[2]string]int{}}
	for i, f := range files {
		from := names[i]
		ast.Inspect(f, func(n ast.Node) bool {
			var obj types.Object
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if sel, ok := info.Selections[n]; ok {
					obj = sel.Obj()
				}
			case *ast.Ident:
				obj = info.Uses[n]
			}
			if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
				return true
			}
			to := fset.Position(obj.Pos()).Filename
			for _, name := range names {
				if hasSuffixPath(to, name) {
					to = name
					break
				}
			}
			if to != from {
				g.edges[[2]string{from, to}]++
			}
			return true
		})
	}
	return g, nil
}

func containsSlash(s string) bool {
	for _, c := range s {
		if c == '/' {
			return true
		}
	}
	return false
}

func hasSuffixPath(full, rel string) bool {
	return len(full) >= len(rel) && full[len(full)-len(rel):] == rel && (len(full) == len(rel) || full[len(full)-len(rel)-1] == '/')
}

// backward counts the file pairs that depend on each other, directly or
// through other files: the edges inside the graph's strongly connected
// components (Tarjan). Any order of the files sends at least some of these
// back; none else need be.
func (g fileGraph) backward() (edges, files int) {
	adj := map[string][]string{}
	for e := range g.edges {
		adj[e[0]] = append(adj[e[0]], e[1])
	}
	for _, v := range adj {
		sort.Strings(v)
	}
	index, low, comp := map[string]int{}, map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	next, ncomp := 0, 0
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range adj[v] {
			if _, seen := index[w]; !seen {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = ncomp
				if w == v {
					break
				}
			}
			ncomp++
		}
	}
	for _, f := range g.files {
		if _, seen := index[f]; !seen {
			strong(f)
		}
	}
	size := map[int]int{}
	for _, c := range comp {
		size[c]++
	}
	for e := range g.edges {
		if comp[e[0]] == comp[e[1]] {
			edges++
		}
	}
	for _, f := range g.files {
		if size[comp[f]] > 1 {
			files++
		}
	}
	return edges, files
}

// feedback is the number of file-to-file edges that point backward in an
// order of the files found by Eades, Lin and Smyth's heuristic for a small
// feedback arc set: the references a layering of the files would have to
// send back.
func (g fileGraph) feedback() int { return len(g.feedbackEdges()) }

// feedbackEdges are those edges.
func (g fileGraph) feedbackEdges() [][2]string {
	out, in := map[string]map[string]bool{}, map[string]map[string]bool{}
	left := map[string]bool{}
	for _, f := range g.files {
		out[f], in[f], left[f] = map[string]bool{}, map[string]bool{}, true
	}
	for e := range g.edges {
		out[e[0]][e[1]], in[e[1]][e[0]] = true, true
	}
	remove := func(v string) {
		delete(left, v)
		for w := range out[v] {
			delete(in[w], v)
		}
		for w := range in[v] {
			delete(out[w], v)
		}
	}
	var head, tail []string
	for len(left) > 0 {
		changed := true
		for changed {
			changed = false
			for _, v := range sorted(left) {
				if len(out[v]) == 0 {
					tail = append([]string{v}, tail...)
					remove(v)
					changed = true
				} else if len(in[v]) == 0 {
					head = append(head, v)
					remove(v)
					changed = true
				}
			}
		}
		if len(left) == 0 {
			break
		}
		best, bestD := "", -1<<30
		for _, v := range sorted(left) {
			if d := len(out[v]) - len(in[v]); d > bestD {
				best, bestD = v, d
			}
		}
		head = append(head, best)
		remove(best)
	}
	pos := map[string]int{}
	for i, v := range append(head, tail...) {
		pos[v] = i
	}
	var back [][2]string
	for e := range g.edges {
		if pos[e[0]] > pos[e[1]] {
			back = append(back, e)
		}
	}
	sort.Slice(back, func(i, j int) bool { return back[i][0]+back[i][1] < back[j][0]+back[j][1] })
	return back
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (g fileGraph) report() {
	inCycles, files := g.backward()
	fmt.Printf("Domain file graph: %d files, %d file-to-file edges; %d edges among the %d files that depend on each other; backward references (edges against a near-best order of the files): %d\n",
		len(g.files), len(g.edges), inCycles, files, g.feedback())
	if os.Getenv("MEASURES_EDGES") != "" {
		for _, e := range g.feedbackEdges() {
			fmt.Printf("  back: %s -> %s (%d)\n", e[0], e[1], g.edges[e])
		}
	}
}
