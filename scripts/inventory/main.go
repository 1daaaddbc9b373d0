// Command inventory reads `go test -json` output and says which end-to-end
// capability tests passed on which agent versions.
//
//	go test -json ./... | inventory -tee FILE   # print the tests' output as go test would, keep the JSON in FILE
//	inventory [-floor N] FILE                   # one line per end-to-end test, then the total
//
// A pair is a top-level TestE2E* test (named with its package) and an agent version (kind@version)
// that one of its subtests names and passed on; a TestE2E test that names
// no version counts once when it passed. With -floor, a total below N fails.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

var versionRE = regexp.MustCompile(`^(claude|codex)@[0-9][0-9A-Za-z.\-]*$`)

func main() {
	tee := flag.String("tee", "", "copy the JSON on stdin to this file and print the tests' output")
	floor := flag.Int("floor", 0, "fail when the total is below this")
	flag.Parse()
	if *tee != "" {
		if err := stream(os.Stdin, *tee); err != nil {
			fmt.Fprintln(os.Stderr, "inventory:", err)
			os.Exit(1)
		}
		return
	}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: inventory [-floor N] FILE | inventory -tee FILE")
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "inventory:", err, "(run make test first)")
		os.Exit(1)
	}
	defer f.Close()
	total := report(f, os.Stdout)
	if total < *floor {
		fmt.Printf("the total %d is below the floor %d: a capability lost a version\n", total, *floor)
		os.Exit(1)
	}
}

// stream copies r to path and prints what go test prints without -v: a
// test's output only when it fails, and each package's result.
func stream(r io.Reader, path string) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer out.Close()
	held := map[string][]string{} // package/test -> its output so far
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Bytes()
		out.Write(line)
		out.Write([]byte{'\n'})
		var e event
		if json.Unmarshal(line, &e) != nil {
			fmt.Println(string(line)) // a build error's text is not JSON
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "output" && e.Test == "":
			if !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(e.Output, "PASS") {
				fmt.Print(e.Output)
			}
		case e.Action == "output":
			held[key] = append(held[key], e.Output)
		case e.Action == "fail" && e.Test != "":
			fmt.Print(strings.Join(held[key], ""))
			delete(held, key)
		case e.Action == "pass" || e.Action == "skip":
			delete(held, key)
		}
	}
	return sc.Err()
}

// report prints one line per end-to-end test and returns the total.
func report(r io.Reader, w io.Writer) int {
	passed := map[string]map[string]bool{} // test -> versions
	topPassed := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Action != "pass" || !strings.HasPrefix(e.Test, "TestE2E") {
			continue
		}
		parts := strings.Split(e.Test, "/")
		top := strings.TrimPrefix(e.Package, "akk/") + " " + parts[0]
		if len(parts) == 1 {
			topPassed[top] = true
			continue
		}
		for _, p := range parts[1:] {
			if versionRE.MatchString(p) {
				if passed[top] == nil {
					passed[top] = map[string]bool{}
				}
				passed[top][p] = true
			}
		}
	}
	var tests []string
	for t := range topPassed {
		tests = append(tests, t)
	}
	for t := range passed {
		if !topPassed[t] {
			tests = append(tests, t) // its failure is in the run's output
		}
	}
	sort.Strings(tests)
	total := 0
	for _, t := range tests {
		vs := passed[t]
		if len(vs) == 0 {
			fmt.Fprintf(w, "%-58s  1  (no agent version in its subtests)\n", t)
			total++
			continue
		}
		var names []string
		for v := range vs {
			names = append(names, v)
		}
		sort.Strings(names)
		fmt.Fprintf(w, "%-58s %2d  %s\n", t, len(names), strings.Join(names, " "))
		total += len(names)
	}
	fmt.Fprintf(w, "total: %d (end-to-end test, agent version) pairs passed\n", total)
	return total
}
