package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/BurntSushi/toml"
)

// fileConfig is akk's config file: under the flags and the environment,
// over the defaults.
type fileConfig struct {
	URL       string `toml:"url"`        // akkd's address, as --url
	TokenFile string `toml:"token_file"` // a file holding the token to use (a host's, say)
	StateDir  string `toml:"state_dir"`  // akkd's state dir, as --state-dir
}

// configPath is AKK_CONFIG, else $XDG_CONFIG_HOME/akk/config.toml, else
// ~/.config/akk/config.toml.
func configPath(getenv func(string) string) string {
	if p := getenv("AKK_CONFIG"); p != "" {
		return p
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "akk", "config.toml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "akk", "config.toml")
	}
	return ""
}

// loadConfig reads the config file; none is no error, a broken one or an
// unknown key is a usage error naming the file.
func loadConfig(getenv func(string) string) (fileConfig, error) {
	var cfg fileConfig
	path := configPath(getenv)
	if path == "" {
		return cfg, nil
	}
	md, err := toml.DecodeFile(path, &cfg)
	if errors.Is(err, fs.ErrNotExist) {
		return fileConfig{}, nil
	}
	if err != nil {
		return cfg, usageErr(fmt.Sprintf("config file %s: %v", path, err))
	}
	if un := md.Undecoded(); len(un) > 0 {
		return cfg, usageErr(fmt.Sprintf("config file %s: unknown key %q (url, token_file, state_dir)", path, un[0].String()))
	}
	return cfg, nil
}
