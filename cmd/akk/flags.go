package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// newFlags is a command's flag set: flags before or after its arguments
// (pflag's), errors returned, never printed.
func newFlags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args; a mistake is a usage error that names the
// closest flag the command has.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil {
		return nil
	}
	msg := fs.Name() + ": " + err.Error()
	if bad, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		var names []string
		fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		if m := didYouMean(bad, names); m != "" {
			msg += fmt.Sprintf(": did you mean --%s?", m)
		}
	}
	return usageErr(msg + " (see akk help " + strings.Fields(fs.Name())[0] + ")")
}
